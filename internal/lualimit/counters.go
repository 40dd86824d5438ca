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
	if !counterOK {
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
	jumpTable[lua.OP_JMP] = countedJmp
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

func countedJmp(L *lua.LState, inst uint32, bf unsafe.Pointer) int {
	if c := counter(L); *c > 1 {
		*c--
	} else {
		look(L)
	}
	return before[2](L, inst, bf)
}

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
