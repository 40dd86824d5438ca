package lualimit

import (
	"reflect"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua runs each instruction through a package-level table of
// handlers (internal/lua51 replaces some of them). The instructions that
// close a loop or make a call (FORLOOP, TFORLOOP, JMP, CALL, TAILCALL) get
// a handler here that counts down a per-state counter first and looks at
// the state's memory when it runs out, then runs the handler it replaced.
// Any script that allocates without end goes through one of them.
//
//go:linkname jumpTable github.com/yuin/gopher-lua.jumpTable
var jumpTable [lua.OP_NOP + 1]instruction

// instruction is gopher-lua's instFunc; its third parameter is a
// *callFrame, a pointer whatever its type's name.
type instruction func(L *lua.LState, inst uint32, baseframe unsafe.Pointer) int

// CheckEvery is how many counted instructions pass between two looks at
// the heap. A look reads runtime/metrics (1.5 µs); a loop iteration of
// plain Lua takes 0.05–0.2 µs, so a look costs about one per cent of the
// time at 4096, and a loop can allocate 4096 iterations' worth between
// two looks.
const CheckEvery = 1 << 12

// counter is the field gopher-lua's Global declares and never uses
// (gccount int32): one per state and its coroutines, which run on one
// goroutine at a time, so it needs no lock. Found by name and type; when
// it is not there (another gopher-lua release), the counters are not
// installed and TestCountersAreInstalled fails.
var counterOffset, counterOK = func() (uintptr, bool) {
	f, ok := reflect.TypeFor[lua.Global]().FieldByName("gccount")
	return f.Offset, ok && f.Type == reflect.TypeFor[int32]()
}()

func counter(L *lua.LState) *int32 {
	return (*int32)(unsafe.Add(unsafe.Pointer(L.G), counterOffset))
}

// countedOps are the instructions counted, and their handlers before.
var countedOps = [...]int{lua.OP_FORLOOP, lua.OP_TFORLOOP, lua.OP_JMP, lua.OP_CALL, lua.OP_TAILCALL}

var before [len(countedOps)]instruction

func installCounters() {
	if !counterOK || !frameLayout.ok {
		return
	}
	for i, op := range countedOps {
		if jumpTable[op] == nil {
			return
		}
		before[i] = jumpTable[op]
	}
	jumpTable[lua.OP_FORLOOP] = countedForloop
	jumpTable[lua.OP_TFORLOOP] = countedTforloop
	jumpTable[lua.OP_JMP] = countedJmp // gopher-lua's is before[2], for tests
	jumpTable[lua.OP_CALL] = countedCall
	jumpTable[lua.OP_TAILCALL] = countedTailcall
}

// look is the counters' slow path: every CheckEvery counted instructions
// of a state, a look at its memory.
func look(L *lua.LState) {
	*counter(L) = CheckEvery
	if m := memoryOf(L); m != nil {
		m.Check(L, 0)
	}
}

// One function an instruction, each counting in place (a call to a
// shared counting function would not be inlined) and calling the handler
// it replaced: a shared closure would cost an indirect call more.

func countedForloop(L *lua.LState, inst uint32, bf unsafe.Pointer) int {
	if c := counter(L); *c > 1 {
		*c--
	} else {
		look(L)
	}
	return before[0](L, inst, bf)
}

func countedTforloop(L *lua.LState, inst uint32, bf unsafe.Pointer) int {
	if c := counter(L); *c > 1 {
		*c--
	} else {
		look(L)
	}
	return before[1](L, inst, bf)
}

// countedJmp is gopher-lua's JMP itself (the frame's Pc moves by sBx),
// counting only the jumps back, which close while and repeat loops: most
// jumps are forward, past an if's branch, and a jump is too cheap to pay a
// call to the handler it replaces.
func countedJmp(L *lua.LState, inst uint32, _ unsafe.Pointer) int {
	sbx := int(inst&0x3ffff) - maxArgSbx
	if sbx < 0 {
		if c := counter(L); *c > 1 {
			*c--
		} else {
			look(L)
		}
	}
	frame := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(L), frameLayout.current))
	*(*int)(unsafe.Add(frame, frameLayout.pc)) += sbx
	return 0
}

// maxArgSbx is the bias of an instruction's signed sBx field (18 bits),
// gopher-lua's opMaxArgSbx.
const maxArgSbx = (1<<18 - 1) >> 1

// frameLayout finds the current call frame in an LState and the Pc in a
// frame, for countedJmp; when either is missing or of another type the
// counters are not installed.
var frameLayout = func() (l struct {
	ok          bool
	current, pc uintptr
}) {
	cur, ok := reflect.TypeFor[lua.LState]().FieldByName("currentFrame")
	if !ok || cur.Type.Kind() != reflect.Pointer || cur.Type.Elem().Kind() != reflect.Struct {
		return l
	}
	pc, ok := cur.Type.Elem().FieldByName("Pc")
	l.current, l.pc, l.ok = cur.Offset, pc.Offset, ok && pc.Type == reflect.TypeFor[int]()
	return l
}()

func countedCall(L *lua.LState, inst uint32, bf unsafe.Pointer) int {
	if c := counter(L); *c > 1 {
		*c--
	} else {
		look(L)
	}
	return before[3](L, inst, bf)
}

func countedTailcall(L *lua.LState, inst uint32, bf unsafe.Pointer) int {
	if c := counter(L); *c > 1 {
		*c--
	} else {
		look(L)
	}
	return before[4](L, inst, bf)
}

// countersInstalled says whether the counted handlers run.
func countersInstalled() bool {
	return reflect.ValueOf(jumpTable[lua.OP_FORLOOP]).Pointer() == reflect.ValueOf(instruction(countedForloop)).Pointer()
}
