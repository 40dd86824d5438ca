package lua51

import (
	"reflect"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// yielder is coroutine.yield, refusing, as Lua 5.1's does, to yield from
// inside a Go function (pcall, xpcall, table.sort's comparator, a gsub
// callback) or a function an instruction called (a metamethod such as
// __index or __add, a generic for's iterator). gopher-lua runs those in a
// Go call of its own, yields anyway, and that call never returns: the
// next resume failed with "invalid memory address or nil pointer
// dereference". Inside pcall the refusal is an error pcall catches, as in
// Lua 5.1, and the coroutine goes on.
type yielder struct {
	yield lua.LGFunction // gopher-lua's
}

func (y yielder) call(L *lua.LState) int {
	// Lua 5.1 says the same outside a coroutine, where the main chunk's
	// caller is C, and without a position (luaG_runerror in a C function).
	if L.Parent == nil || insideGoFunction(L) {
		L.Error(lua.LString("attempt to yield across metamethod/C-call boundary"), 0)
	}
	return y.yield(L)
}

// luaFunction is lcorolib's check of coroutine.create's and wrap's
// argument: a Lua function (gopher-lua's took a Go one, and said
// "function expected, got ...").
func luaFunction(L *lua.LState, name string) {
	if fn, ok := L.Get(1).(*lua.LFunction); !ok || fn.IsG {
		argError(L, 1, name, "Lua function expected")
	}
}

// coroutineArg is the coroutine that resume and status take, with Lua
// 5.1's "coroutine expected" for anything else.
func coroutineArg(L *lua.LState, name string) *lua.LState {
	th, ok := L.Get(1).(*lua.LState)
	if !ok {
		argError(L, 1, name, "coroutine expected")
	}
	return th
}

// insideGoFunction says whether a Go function, or a Go call of gopher-
// lua's own, is running below the current function in L's stack: a Lua
// function's caller is itself a Go function, or a Lua function whose
// instruction running is not a call, so that an instruction's handler
// called it (a metamethod, an iterator).
func insideGoFunction(L *lua.LState) bool {
	if layout.ok && vmLayout.ok {
		frame := *currentFrame(L)
		if frame == nil {
			return false
		}
		for child, frame := frame, frameParent(frame); frame != nil; child, frame = frame, frameParent(frame) {
			fn := frameFn(frame)
			if fn.IsG {
				return true
			}
			if !frameFn(child).IsG {
				if pc := framePc(frame); pc < 1 || int(fn.Proto.Code[pc-1]>>26) != lua.OP_CALL {
					return true
				}
			}
		}
		return false
	}
	for level := 1; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			return false
		}
		if fn, err := L.GetInfo("f", dbg, lua.LNil); err == nil {
			if f, ok := fn.(*lua.LFunction); ok && f.IsG {
				return true
			}
		}
	}
}

// resumer is coroutine.resume with Lua 5.1's refusals, "cannot resume
// dead coroutine" (gopher-lua: "can not resume a dead thread"), "cannot
// resume running coroutine" ("can not resume a running thread") and
// "cannot resume normal coroutine" for one waiting on a coroutine it
// resumed, which gopher-lua resumes.
//
// Each resume nests a Go call (gopher-lua runs the coroutine on the
// resumer's goroutine), so coroutines resuming coroutines without end
// would grow Go's stack until the process dies. Lua 5.1 refuses a resume
// once 200 C calls nest (LUAI_MAXCCALLS), which lua5.1 reaches at the
// 198th nested resume of a script run from the command line (lua.c's own
// calls and the script's pcall hold three); maxNestedResumes refuses the
// same one, with the same "C stack overflow".
type resumer struct {
	resume lua.LGFunction // gopher-lua's
}

// maxNestedResumes is how many coroutines may wait on the ones they
// resumed before a further resume fails.
const maxNestedResumes = 197

func (r resumer) call(L *lua.LState) int {
	th := coroutineArg(L, "resume")
	msg := ""
	switch {
	case th.Dead:
		msg = "cannot resume dead coroutine"
	case th == L:
		msg = "cannot resume running coroutine"
	}
	// The coroutines that resumed L, up to the main one, are waiting.
	nested := 0
	for waiting := L.Parent; waiting != nil && msg == ""; waiting = waiting.Parent {
		if waiting == th {
			msg = "cannot resume normal coroutine"
		}
		nested++
	}
	if msg == "" && nested >= maxNestedResumes {
		msg = "C stack overflow"
	}
	if msg != "" {
		L.Push(lua.LFalse)
		L.Push(lua.LString(msg))
		return 2
	}
	padYieldResults(L, th)
	KeepHook(th) // the host may have given the thread its loop again
	wordErrors(th)
	n := r.resume(L)
	// A coroutine that passes the call depth ends in gopher-lua's own
	// panic; it is worded as PCall words it.
	if n == 2 && L.Get(-2) == lua.LFalse && L.Get(-1) == lua.LString("lua callstack overflow") {
		err := overflow(&lua.ApiError{Object: L.Get(-1)}).(*lua.ApiError)
		L.Replace(L.GetTop(), err.Object)
	}
	return n
}

// padYieldResults gives a suspended coroutine's yield as many values as
// the call to it takes, nil for those the resume does not pass, as Lua 5.1
// adjusts them. gopher-lua moves only the values given into the registers
// the call's results go to, and the others keep Go's nil, which the next
// instruction that reads them fails on with a Go runtime error. L's stack
// is the coroutine and the values to pass.
func padYieldResults(L, th *lua.LState) {
	if !vmLayout.ok {
		return
	}
	cf := *currentFrame(th)
	if cf == nil {
		return
	}
	fn, pc := frameFn(cf), framePc(cf)
	if fn == nil || fn.IsG || fn.Proto == nil || pc <= 0 || pc > len(fn.Proto.Code) {
		return // not yet started, or not stopped in a call from Lua
	}
	inst := fn.Proto.Code[pc-1]
	if int(inst>>26) != lua.OP_CALL {
		return
	}
	want := int(inst>>9)&0x1ff - 1 // C-1 results; -1 takes them all
	for given := L.GetTop() - 1; given < want; given++ {
		L.Push(lua.LNil)
	}
}

// Errors raised in a coroutine outside any pcall reach no message handler
// that could word them as Lua 5.1 does: gopher-lua's resume recovers them
// after the fact. Its raise calls the thread's Panic function first, where
// the frame that raised the error is still current, but resume sets that
// function itself when it starts a thread. So the coroutine's main loop,
// which resume calls next, is wrapped to put wordedPanic in place first,
// at every resume: a host that gives the thread a context (SetContext)
// replaces the main loop.
func wordErrors(th *lua.LState) {
	if !vmLayout.ok {
		return
	}
	loop := mainLoop(th)
	if reflect.ValueOf(*loop).Pointer() == wordingLoop {
		return
	}
	*loop = wordingMainLoop(*loop)
}

func wordingMainLoop(inner func(*lua.LState, unsafe.Pointer)) func(*lua.LState, unsafe.Pointer) {
	return func(L *lua.LState, baseframe unsafe.Pointer) {
		L.Panic = wordedPanic
		inner(L, baseframe)
	}
}

// wordingLoop is the code of wordingMainLoop's closures.
var wordingLoop = reflect.ValueOf(wordingMainLoop(nil)).Pointer()

// wordedPanic is gopher-lua's panicWithoutTraceback, which resume puts in
// a coroutine, with the error reworded first.
func wordedPanic(L *lua.LState) {
	msg := reword(L, *currentFrame(L), L.Get(-1))
	panic(&lua.ApiError{Type: lua.ApiErrorRun, Object: msg})
}

// wrapper is coroutine.wrap as Lua 5.1's auxwrap: the function it returns
// resumes the coroutine with coroutine.resume's refusals, and raises an
// error the coroutine ended with, a string after the caller's position.
// gopher-lua's marks the coroutine to carry its errors out itself, which
// words a dead coroutine "can not resume a dead thread", with the position
// of the nearest Lua function past pcall, and leaves a coroutine that
// failed neither dead nor resumable ("can not resume a running thread").
type wrapper struct {
	create, resume *lua.LFunction // coroutine.create, and resumer
}

func (w wrapper) call(L *lua.LState) int {
	luaFunction(L, "wrap")
	L.Push(w.create)
	L.Push(L.Get(1))
	L.Call(1, 1)
	co := L.Get(-1)
	L.Pop(1)
	// The coroutine is also the function's one upvalue, as in gopher-lua's
	// wrap, so that a host can find it there (glua's runtime passes each
	// caller's context on to it).
	L.Push(L.NewClosure(wrapped{w.resume, co}.call, co))
	return 1
}

// wrapped is the function coroutine.wrap returns: it resumes co and raises
// the coroutine's error, a string after the position of its caller (Lua
// 5.1's auxwrap).
type wrapped struct {
	resume *lua.LFunction
	co     lua.LValue
}

func (w wrapped) call(L *lua.LState) int {
	nargs := L.GetTop()
	L.Push(w.resume)
	L.Push(w.co)
	for i := 1; i <= nargs; i++ {
		L.Push(L.Get(i))
	}
	L.Call(nargs+1, lua.MultRet)
	if L.Get(nargs+1) == lua.LFalse {
		switch v := L.Get(nargs + 2).(type) {
		case lua.LString:
			raise(L, string(v))
		case lua.LNumber:
			raise(L, numberString(v))
		default:
			L.Error(v, 0)
		}
	}
	return L.GetTop() - nargs - 1
}
