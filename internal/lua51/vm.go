package lua51

import (
	"math"
	"reflect"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua runs each instruction through a package-level table of
// handlers, one per opcode. The handlers below replace those of the
// instructions whose results or errors differ from Lua 5.1's: arithmetic
// (math.Mod for %, Go's math.Pow for ^, minus zero turned into plus zero,
// metamethods tried before numeric strings), concatenation (numbers in Go's
// shortest form) and the numeric for's preparation (string bounds refused).
// They are written against the same registers gopher-lua's use, reached
// through the layout below, and are as direct as gopher-lua's on numbers:
// no call to the handler they replace.
//
//go:linkname jumpTable github.com/yuin/gopher-lua.jumpTable
var jumpTable [lua.OP_NOP + 1]instruction

// instruction is gopher-lua's instFunc; its third parameter is a
// *callFrame, which is a pointer whatever the name of its type.
type instruction func(L *lua.LState, inst uint32, baseframe unsafe.Pointer) int

// registryResize is gopher-lua's (*registry).resize, which grows the value
// stack to hold at least n slots.
//
//go:linkname registryResize github.com/yuin/gopher-lua.(*registry).resize
func registryResize(rg unsafe.Pointer, n int)

// allocNumber is gopher-lua's (*allocator).LNumber2I: a number as an
// LValue, boxed in a block of numbers rather than one allocation each. It
// returns a shared +0 for -0, so setNumber keeps minus zero out of it.
//
//go:linkname allocNumber github.com/yuin/gopher-lua.(*allocator).LNumber2I
func allocNumber(al unsafe.Pointer, v lua.LNumber) lua.LValue

// vmLayout holds the offsets of the unexported fields the handlers read:
// in LState, reg *registry; in registry, array []LValue, top int and
// alloc *allocator; in callFrame, Fn, Pc, LocalBase and NArgs; mainLoop. The call frame
// itself is at layout.currentFrame. When any is missing or of another type
// the handlers are not installed, and TestGopherLuaLayoutIsKnown fails.
var vmLayout = func() (l struct {
	ok                     bool
	reg                    uintptr
	array, top, alloc      uintptr
	fn, pc, localBase, mlp uintptr
	nargs                  uintptr
	panicField             uintptr
}) {
	state := reflect.TypeFor[lua.LState]()
	reg, ok1 := state.FieldByName("reg")
	cur, ok2 := state.FieldByName("currentFrame")
	ml, ok3 := state.FieldByName("mainLoop")
	if !ok1 || !ok2 || !ok3 || reg.Type.Kind() != reflect.Pointer || reg.Type.Elem().Kind() != reflect.Struct ||
		cur.Type.Kind() != reflect.Pointer || ml.Type.Kind() != reflect.Func || ml.Type.NumIn() != 2 ||
		ml.Type.In(0) != reflect.TypeFor[*lua.LState]() || ml.Type.In(1) != cur.Type {
		return l
	}
	registry := reg.Type.Elem()
	frame := cur.Type.Elem()
	field := func(t reflect.Type, name string, ok func(reflect.Type) bool) (uintptr, bool) {
		sf, found := t.FieldByName(name)
		return sf.Offset, found && ok(sf.Type)
	}
	is := func(want reflect.Type) func(reflect.Type) bool {
		return func(t reflect.Type) bool { return t == want }
	}
	isInt := is(reflect.TypeFor[int]())
	var oks [7]bool
	l.reg = reg.Offset
	l.mlp = ml.Offset
	l.array, oks[0] = field(registry, "array", is(reflect.TypeFor[[]lua.LValue]()))
	l.top, oks[1] = field(registry, "top", isInt)
	l.alloc, oks[2] = field(registry, "alloc", func(t reflect.Type) bool {
		return t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct
	})
	l.fn, oks[3] = field(frame, "Fn", is(reflect.TypeFor[*lua.LFunction]()))
	l.pc, oks[4] = field(frame, "Pc", isInt)
	l.localBase, oks[5] = field(frame, "LocalBase", isInt)
	l.nargs, oks[6] = field(frame, "NArgs", isInt)
	l.ok = layout.ok
	for _, ok := range oks {
		l.ok = l.ok && ok
	}
	return l
}()

// gopherHandlers is gopher-lua's jump table as it was before install, kept
// so that a test can check its shape.
var gopherHandlers = jumpTable

func init() {
	if !vmLayout.ok || !jumpTableKnown() {
		return
	}
	for op, h := range map[int]instruction{
		lua.OP_ADD:      opAdd,
		lua.OP_SUB:      opSub,
		lua.OP_MUL:      opMul,
		lua.OP_DIV:      opDiv,
		lua.OP_MOD:      opMod,
		lua.OP_POW:      opPow,
		lua.OP_UNM:      opUnm,
		lua.OP_CONCAT:   opConcat,
		lua.OP_FORPREP:  opForprep,
		lua.OP_LEN:      opLen,
		lua.OP_SETTABLE: opSettable,
		lua.OP_CALL:     opCall,
		lua.OP_TAILCALL: opTailcall,
	} {
		jumpTable[op] = h
	}
}

// jumpTableKnown checks what can be checked of the table's shape: every
// opcode has a handler, and the six arithmetic opcodes share one (gopher-
// lua's opArith), as in v1.1.2.
func jumpTableKnown() bool {
	for _, h := range gopherHandlers {
		if h == nil {
			return false
		}
	}
	arith := reflect.ValueOf(gopherHandlers[lua.OP_ADD]).Pointer()
	for _, op := range []int{lua.OP_SUB, lua.OP_MUL, lua.OP_DIV, lua.OP_MOD, lua.OP_POW} {
		if reflect.ValueOf(gopherHandlers[op]).Pointer() != arith {
			return false
		}
	}
	return reflect.ValueOf(gopherHandlers[lua.OP_UNM]).Pointer() != arith
}

// vmInstalled says whether the handlers above run in place of gopher-lua's.
var vmInstalled = func() bool {
	return reflect.ValueOf(jumpTable[lua.OP_ADD]).Pointer() == reflect.ValueOf(instruction(opAdd)).Pointer()
}

func registryOf(L *lua.LState) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(L), vmLayout.reg))
}

func registers(rg unsafe.Pointer) []lua.LValue {
	return *(*[]lua.LValue)(unsafe.Add(rg, vmLayout.array))
}

func frameBase(cf unsafe.Pointer) int {
	return *(*int)(unsafe.Add(cf, vmLayout.localBase))
}

// frameArgs is the number of arguments the frame's function was given.
func frameArgs(cf unsafe.Pointer) int {
	return *(*int)(unsafe.Add(cf, vmLayout.nargs))
}

func framePc(cf unsafe.Pointer) int {
	return *(*int)(unsafe.Add(cf, vmLayout.pc))
}

func setFramePc(cf unsafe.Pointer, pc int) {
	*(*int)(unsafe.Add(cf, vmLayout.pc)) = pc
}

// mainLoop is L's main loop: gopher-lua's, or one that wraps or replaces
// it (wordErrors, KeepHook). Its call frame parameter is a pointer.
func mainLoop(L *lua.LState) *func(*lua.LState, unsafe.Pointer) {
	return (*func(*lua.LState, unsafe.Pointer))(unsafe.Add(unsafe.Pointer(L), vmLayout.mlp))
}

// rk is gopher-lua's rkValue: a constant when the operand's top bit is
// set, else a register of the frame.
func rk(rg unsafe.Pointer, cf unsafe.Pointer, x int) lua.LValue {
	if x&opBitRk != 0 {
		return frameFn(cf).Proto.Constants[x&^opBitRk]
	}
	return registers(rg)[frameBase(cf)+x]
}

const opBitRk = 1 << 8

// setRegister is gopher-lua's registry Set: the stack grows to hold slot i
// and its top moves above it.
func setRegister(rg unsafe.Pointer, i int, v lua.LValue) {
	arr := (*[]lua.LValue)(unsafe.Add(rg, vmLayout.array))
	if i >= cap(*arr) {
		registryResize(rg, i+1)
	}
	(*arr)[i] = v
	if top := (*int)(unsafe.Add(rg, vmLayout.top)); i >= *top {
		*top = i + 1
	}
}

// setNumber stores a number as gopher-lua's SetNumber does, except that
// minus zero stays minus zero.
func setNumber(rg unsafe.Pointer, i int, v float64) {
	if v == 0 && math.Signbit(v) {
		setRegister(rg, i, lua.LNumber(v))
		return
	}
	setRegister(rg, i, allocNumber(*(*unsafe.Pointer)(unsafe.Add(rg, vmLayout.alloc)), lua.LNumber(v)))
}
