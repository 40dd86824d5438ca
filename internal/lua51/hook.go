package lua51

import (
	"context"
	"reflect"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	lua "github.com/yuin/gopher-lua"
)

// debug.sethook and debug.gethook. gopher-lua has no hooks: its main loop
// runs each instruction through the jump table and nothing else. A thread
// given a hook runs this file's loop instead, the same loop with lvm.c's
// traceexec before each instruction: a "count" event every count
// instructions, and a "line" event when an instruction starts a function,
// jumps back, or lies on another line than the one the frame ran last.
// The hook is called as Lua 5.1's hookf calls it, hook("line", line) or
// hook("count"), with no events while it runs; debug.getinfo(2) in it is
// the function the event is about. Only the threads with a hook pay for
// the check. A thread that sets its own hook is running gopher-lua's loop
// already: the call instruction, once the call is back, goes on in this
// loop (opCall), and so does any other loop of that thread a call returns
// to.
//
// Call and return events ("c" and "r") are refused: Lua 5.1 gives them for
// C functions too, at every call site inside its library, which gopher-
// lua's calls of Go functions do not mirror, and a hook that counted them
// would count differently without a word.

// hookState is a thread's hook, as lua_sethook keeps it in a lua_State.
type hookState struct {
	fn      lua.LValue // what gethook returns: the function given, or nil
	line    bool       // "l": line events
	count   int        // count events every count instructions; 0: none
	left    int        // instructions until the next count event
	running bool       // a hook runs: no events until it returns
	// frames holds, by call-stack index, what lvm.c keeps in savedpc:
	// one past the instruction each frame last ran while traced.
	frames []hookFrame
	// loops are the base frames of the hooked loops running, innermost
	// last.
	loops []unsafe.Pointer
	// stack is the thread's call stack as hookedLoop reads it, looked up
	// the first time (stackOf).
	stack frameStack
}

// frameStack is a thread's call stack as hookedLoop reads it: IsEmpty
// through an interface, Last through reflect. Looking both up by name on
// every entry of the loop (each call of the hook, of a metamethod, of
// pcall's function) was most of what a hook cost: 3 µs an event.
type frameStack struct {
	empty interface{ IsEmpty() bool }
	last  reflect.Value
}

func stackOf(L *lua.LState) frameStack {
	stack := callStack(L).Elem()
	return frameStack{empty: stack.Interface().(interface{ IsEmpty() bool }), last: stack.MethodByName("Last")}
}

// active says whether the hook has events to give and a function to
// give them to (a new thread's events have none, creator).
func (h *hookState) active() bool {
	_, isFn := h.fn.(*lua.LFunction)
	return isFn && (h.line || h.count > 0)
}

type hookFrame struct {
	fn *lua.LFunction
	pc int
}

// hooks maps a thread to its hook, which stays its own once made (a loop
// running it sees each change); a thread that is collected leaves.
var hooks sync.Map // weak.Pointer[lua.LState] -> *hookState

// activeHooks counts the threads whose hooks have events, so that a call
// instruction of a process with none looks no further.
var activeHooks atomic.Int64

func hookOf(L *lua.LState) *hookState {
	if h, ok := hooks.Load(weak.Make(L)); ok {
		return h.(*hookState)
	}
	return nil
}

// debugSethook is ldblib.c's db_sethook: ([thread,] hook, mask [, count]),
// or no hook to clear the thread's.
func debugSethook(L *lua.LState) int {
	L1, arg := threadArg(L)
	if L.Get(arg+1) == lua.LNil {
		setHook(L1, lua.LNil, false, 0)
		return 0
	}
	mask := L.CheckString(arg + 2)
	fn := L.CheckFunction(arg + 1)
	count := optInt(L, arg+3, 0)
	line := false
	for _, c := range mask {
		switch c {
		case 'l':
			line = true
		case 'c', 'r':
			L.RaiseError("debug.sethook: call and return events (\"c\" and \"r\") are not supported; glua gives line and count events (\"l\" and a count)")
		}
	}
	setHook(L1, fn, line, max(count, 0))
	return 0
}

// debugGethook is ldblib.c's db_gethook: the hook function (nil when
// none was given), its mask and its count.
func debugGethook(L *lua.LState) int {
	L1, _ := threadArg(L)
	h := hookOf(L1)
	if h == nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(""))
		L.Push(lua.LNumber(0))
		return 3
	}
	L.Push(h.fn)
	mask := ""
	if h.line {
		mask = "l"
	}
	L.Push(lua.LString(mask))
	L.Push(lua.LNumber(h.count))
	return 3
}

// creator is coroutine.create, whose thread takes its creator's hook
// events as lua_newthread copies them: its hook function stays unset, so
// that debug.gethook(co) gives nil with the mask and count, and the
// events call nothing until the thread is given a hook of its own.
type creator struct {
	create lua.LGFunction // gopher-lua's
}

func (c creator) call(L *lua.LState) int {
	luaFunction(L, "create")
	n := c.create(L)
	if th, ok := L.Get(-1).(*lua.LState); ok && n == 1 {
		if h := hookOf(L); h != nil && (h.line || h.count > 0) {
			setHook(th, lua.LNil, h.line, h.count)
		}
	}
	return n
}

// setHook gives L1 the hook fn with its events; with neither a function
// nor events, none. A function with no events still answers gethook, as
// in Lua 5.1, where lua_sethook clears the events and db_gethook reads
// the function from its own table, and so do events with no function (a
// new thread's, creator).
func setHook(L1 *lua.LState, fn lua.LValue, line bool, count int) {
	h := hookOf(L1)
	if h == nil {
		if fn == lua.LNil && !line && count == 0 {
			return
		}
		key := weak.Make(L1)
		h = &hookState{fn: lua.LNil}
		if old, loaded := hooks.LoadOrStore(key, h); loaded {
			h = old.(*hookState)
		} else {
			goruntime.AddCleanup(L1, forgetHook, key)
		}
	}
	was := h.active()
	h.fn, h.line, h.count, h.left = fn, line, count, count
	h.frames = h.frames[:0]
	switch now := h.active(); {
	case now && !was:
		activeHooks.Add(1)
	case was && !now:
		activeHooks.Add(-1)
	}
	if h.active() {
		KeepHook(L1)
	} else {
		restoreLoop(L1)
	}
}

// forgetHook drops the hook of a thread that has been collected, and its
// count among the active ones.
func forgetHook(key weak.Pointer[lua.LState]) {
	if h, ok := hooks.LoadAndDelete(key); ok && h.(*hookState).active() {
		activeHooks.Add(-1)
	}
}

// KeepHook puts L's hook loop back in place where the host has replaced
// the main loop since (gopher-lua's SetContext and RemoveContext do): the
// runtime calls it after each change of context, and coroutine.resume
// before each resume.
func KeepHook(L *lua.LState) {
	if activeHooks.Load() == 0 || !vmLayout.ok || !guardLayout.ok {
		return
	}
	if h := hookOf(L); h == nil || !h.active() {
		return
	}
	loop := mainLoop(L)
	if reflect.ValueOf(*loop).Pointer() == hookingLoop {
		return
	}
	*loop = hookedLoop
}

// restoreLoop gives L gopher-lua's loop again, the one that follows its
// context when it has one.
func restoreLoop(L *lua.LState) {
	if ctx := L.Context(); ctx != nil {
		L.SetContext(ctx)
	} else {
		L.RemoveContext()
	}
}

// gopherLoop is gopher-lua's mainLoop, which runs a Go function's frame,
// read from a state of its own the first time a hook needs it.
var gopherLoop = sync.OnceValue(func() func(*lua.LState, unsafe.Pointer) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	return *mainLoop(L)
})

// hookingLoop is the code of hookedLoop.
var hookingLoop = reflect.ValueOf(hookedLoop).Pointer()

// hookedLoop is gopher-lua's mainLoop, and mainLoopWithContext where the
// thread has a context, with traceexec before each instruction.
func hookedLoop(L *lua.LState, baseframe unsafe.Pointer) {
	h := hookOf(L)
	var stack frameStack
	if h != nil {
		if h.stack.empty == nil {
			h.stack = stackOf(L)
		}
		stack = h.stack
	} else {
		stack = stackOf(L)
	}
	if stack.empty.IsEmpty() {
		return
	}
	cf := stack.last.Call(nil)[0].UnsafePointer()
	*currentFrame(L) = cf
	if frameFn(cf).IsG {
		gopherLoop()(L, baseframe)
		return
	}
	runHooked(L, baseframe, h)
}

// runHooked runs the instructions of the current frame on, and of the
// frames it calls and returns to, until baseframe returns; h is L's hook.
func runHooked(L *lua.LState, baseframe unsafe.Pointer, h *hookState) {
	var done <-chan struct{}
	ctx := L.Context()
	if ctx != nil {
		done = ctx.Done()
	}
	if h != nil {
		h.loops = append(h.loops, baseframe)
		defer func() { h.loops = h.loops[:len(h.loops)-1] }()
	}
	for {
		cf := *currentFrame(L)
		fn, pc := frameFn(cf), framePc(cf)
		inst := fn.Proto.Code[pc]
		setFramePc(cf, pc+1)
		if done != nil {
			select {
			case <-done:
				raiseDone(L, ctx)
				return
			default:
			}
		}
		if h != nil && h.active() && !testJump(fn, inst, pc) {
			h.trace(L, cf, fn, pc)
			if int(inst>>26) == lua.OP_MOVEN {
				// gopher-lua's MOVEN runs the C moves after it as one
				// instruction; Lua 5.1 runs each, and traces each.
				// The frame shows each move as the one running.
				for k := 1; k <= int(inst>>9)&0x1ff; k++ {
					setFramePc(cf, pc+k+1)
					h.trace(L, cf, fn, pc+k)
				}
				setFramePc(cf, pc+1)
			}
		}
		if jumpTable[int(inst>>26)](L, inst, baseframe) == 1 {
			return
		}
	}
}

// enterHook is the call instruction's check, once the call is back: where
// the thread has a hook and this loop is gopher-lua's, the rest of the
// loop's frames run in runHooked, and the loop ends when they do (1).
func enterHook(L *lua.LState, baseframe unsafe.Pointer) int {
	h := hookOf(L)
	if h == nil || !h.active() || len(h.loops) > 0 && h.loops[len(h.loops)-1] == baseframe {
		return 0
	}
	cf := *currentFrame(L)
	if cf == nil || frameFn(cf).IsG {
		return 0
	}
	runHooked(L, baseframe, h)
	return 1
}

func raiseDone(L *lua.LState, ctx context.Context) {
	L.RaiseError("%s", ctx.Err().Error())
}

// testJump says whether inst, at pc of fn, is the jump that follows a
// test: Lua 5.1's test instructions take that jump themselves, so it is
// never an instruction of its own there, where gopher-lua's run it next.
func testJump(fn *lua.LFunction, inst uint32, pc int) bool {
	if int(inst>>26) != lua.OP_JMP || pc == 0 {
		return false
	}
	switch int(fn.Proto.Code[pc-1] >> 26) {
	case lua.OP_EQ, lua.OP_LT, lua.OP_LE, lua.OP_TEST, lua.OP_TESTSET:
		return true
	}
	return false
}

// trace is traceexec for the instruction at pc of fn, in frame cf. The
// count runs on inside a hook too, as Lua 5.1's does, only without the
// event.
func (h *hookState) trace(L *lua.LState, cf unsafe.Pointer, fn *lua.LFunction, pc int) {
	if h.count > 0 {
		if h.left--; h.left <= 0 {
			h.left = h.count
			if !h.running {
				h.call(L, "count", lua.LNil)
			}
		}
	}
	if !h.line || h.running {
		return
	}
	i := frameIndex(cf)
	for len(h.frames) <= i {
		h.frames = append(h.frames, hookFrame{})
	}
	f := &h.frames[i]
	// A frame not traced before stopped in a call, at the instruction
	// before this one, as the frame that set the hook did.
	old := pc
	if f.fn == fn {
		old = f.pc
	}
	f.fn, f.pc = fn, pc+1
	lines := fn.Proto.DbgSourcePositions
	line := lineAt(lines, pc)
	if pc == 0 || pc+1 <= old || line != lineAt(lines, old-1) {
		h.call(L, "line", lua.LNumber(line))
	}
}

func lineAt(lines []int, pc int) int {
	if pc < 0 || pc >= len(lines) {
		return -1
	}
	return lines[pc]
}

// call runs the hook as hookf does, with no events until it returns.
func (h *hookState) call(L *lua.LState, event string, arg lua.LValue) {
	fn, ok := h.fn.(*lua.LFunction)
	if !ok {
		return
	}
	// The hook's call is a call like any other: past the bound it is the
	// overflow at the traced line, as lua5.1 raises it, not gopher-lua's
	// own, which has no position.
	if cf := *currentFrame(L); cf != nil && frameIndex(cf) >= L.Options.CallStackSize-1 {
		checkCallDepth(L)
	}
	h.running = true
	defer func() { h.running = false }()
	L.Push(fn)
	L.Push(lua.LString(event))
	L.Push(arg)
	L.Call(2, 0)
}
