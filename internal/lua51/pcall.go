package lua51

import (
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// PCall calls the function below the nargs arguments on top of L's stack
// in protected mode, as L.PCall does: on success the function and its
// arguments are replaced by nret results (all of them for lua.MultRet) and
// the error is nil; on failure they are removed and the error is a
// *lua.ApiError whose Object is the error value, or handler's result when
// handler is not nil.
//
// Unlike L.PCall, an error closes exactly the upvalues of the frames it
// unwinds, while their registers still hold their values, and nothing
// else, as Lua 5.1 does: a closure made in an unwound frame keeps the
// value its variable had, and one that shares a local of a frame that is
// still running goes on sharing it. handler runs where the error was
// raised, as if called by the function that raised it: a traceback it
// takes starts there. An error inside handler calls handler again with
// the new error, as in Lua 5.1; after 200 such nested errors, or where
// there is no room left to call it, the error value is "error in error
// handling".
//
// With a nil handler the error is what L.PCall gives: Type
// lua.ApiErrorRun and StackTrace holding gopher-lua's traceback of where
// the error was raised; with a handler, Type is lua.ApiErrorError and
// StackTrace is set only where the handler could not run at all (after a
// stack overflow, for one), again as with L.PCall.
//
// Go code that calls back into Lua from inside PCall should protect that
// call with PCall too: L.PCall, L.CallByParam with Protect and L.GPCall
// clear the flag that keeps gopher-lua from closing the upvalues of every
// frame on an error, until the enclosing PCall returns.
func PCall(L *lua.LState, nargs, nret int, handler *lua.LFunction) error {
	p := &protection{trace: handler == nil}
	if handler != nil {
		p.handler = handler
	}
	return p.call(L, nargs, nret)
}

// maxHandlerDepth bounds the errors raised inside a message handler, as
// LUAI_MAXCCALLS bounds the C calls that Lua 5.1 makes re-entering one.
const maxHandlerDepth = 200

var errorInErrorHandling = lua.LString("error in error handling")

// protection is one protected call in progress.
type protection struct {
	// mark is the register index of the highest upvalue open when the call
	// began: every upvalue opened since, and only those, belongs to a frame
	// that an error will unwind (frames below the call cannot run, so
	// cannot open one, until it returns).
	mark int
	// handler is the message handler, nil for none; any other value than a
	// function fails as Lua 5.1's does, with "error in error handling".
	handler lua.LValue
	// depth counts the handlers this call runs inside.
	depth int
	// trace asks for gopher-lua's traceback in the error, as L.PCall puts
	// there when it has no handler.
	trace bool

	ran        bool // onError ran
	stackTrace string
}

func (p *protection) unguarded(L *lua.LState, nargs, nret int) error {
	if !layout.ok {
		var h *lua.LFunction
		if fn, ok := p.handler.(*lua.LFunction); ok {
			h = fn
		} else if p.handler != nil {
			h = L.NewFunction(failingHandler)
		}
		return L.PCall(nargs, nret, h)
	}
	p.mark = highestOpenUpvalue(L)
	// gopher-lua closes no upvalues when an error is raised while this flag
	// is set, leaving that to onError, and L.PCall clears it on return even
	// when an enclosing call had set it.
	flag := hasErrorFunc(L)
	had := *flag
	err := L.PCall(nargs, nret, L.NewFunction(p.onError))
	*flag = had
	if err == nil {
		return nil
	}
	if !p.ran {
		// The handler could not be called (no room left on the call stack or
		// in the registry), and L.PCall has already cleared the registers:
		// the values are lost, but the upvalues must not go on pointing at
		// registers that will be reused.
		closeUpvaluesAbove(L, p.mark, true)
		return err
	}
	if apiErr, ok := err.(*lua.ApiError); ok && p.trace {
		apiErr.Type = lua.ApiErrorRun
		apiErr.StackTrace = p.stackTrace
	}
	return err
}

// onError is the message handler given to L.PCall: gopher-lua calls it
// where the error was raised, before it unwinds anything.
func (p *protection) onError(L *lua.LState) int {
	p.ran = true
	closeUpvaluesAbove(L, p.mark, false)
	// onError's own frame is above the one that raised the error.
	msg := reword(L, frameParent(*currentFrame(L)), L.Get(1))
	if p.trace {
		p.stackTrace = traceback(L)
	}
	if p.handler == nil {
		L.Push(msg)
		return 1
	}
	L.Push(p.runHandler(L, msg))
	return 1
}

// runHandler calls the user's handler on msg and returns its result. The
// handler's frame is made a child of the frame that raised the error, not
// of onError's, so that it sees the stack Lua 5.1 would show it:
// debug.traceback, error levels and getfenv count from the error.
func (p *protection) runHandler(L *lua.LState, msg lua.LValue) lua.LValue {
	fn, ok := p.handler.(*lua.LFunction)
	if !ok || p.depth >= maxHandlerDepth {
		return errorInErrorHandling
	}
	frame := currentFrame(L)
	self := *frame
	*frame = frameParent(self)
	enterHandler(L)
	defer leaveHandler(L)
	L.Push(fn)
	L.Push(msg)
	inner := &protection{handler: fn, depth: p.depth + 1}
	err := inner.call(L, 1, 1)
	// gopher-lua pops frames by the stack, not by Parent, so the frame
	// current now is onError's own either way; set it all the same.
	*frame = self
	if err != nil {
		if !inner.ran {
			// The handler's own error found no room to call it again: Lua
			// 5.1 gives up the same way when its stack overflows inside a
			// handler.
			return errorInErrorHandling
		}
		return errorValue(err)
	}
	v := L.Get(-1)
	L.Pop(1)
	return v
}

// failingHandler stands for a handler that is not a function where the
// layout is unknown.
func failingHandler(L *lua.LState) int {
	L.Push(errorInErrorHandling)
	return 1
}

func errorValue(err error) lua.LValue {
	if apiErr, ok := err.(*lua.ApiError); ok {
		return apiErr.Object
	}
	return lua.LString(err.Error())
}

// gopherTraceback is gopher-lua's debug.traceback, taken from a scratch
// state so that PCall can give the traceback L.PCall would even where a
// sandbox removed the debug library.
var gopherTraceback = sync.OnceValue(func() lua.LGFunction {
	L := lua.NewState()
	defer L.Close()
	if fn, ok := L.GetField(L.GetGlobal("debug"), "traceback").(*lua.LFunction); ok && fn.IsG {
		return fn.GFunction
	}
	return nil
})

// traceback is the traceback L.PCall records, taken from onError: level 0
// is the traceback function, 1 is onError, 2 is where the error was raised.
func traceback(L *lua.LState) string {
	tb := gopherTraceback()
	if tb == nil {
		return ""
	}
	L.Push(L.NewFunction(tb))
	L.Push(lua.LNil)
	L.Push(lua.LNumber(2))
	L.Call(2, 1)
	s := lua.LVAsString(L.Get(-1))
	L.Pop(1)
	return s
}

// basePcall is Lua 5.1's pcall(f, ...) on PCall. A value that cannot be
// called gives false and a message without raising, as gopher-lua's does.
func basePcall(L *lua.LState) int {
	f := L.CheckAny(1)
	if !callable(L, f) {
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a " + f.Type().String() + " value"))
		return 2
	}
	if err := (&protection{}).call(L, L.GetTop()-1, lua.MultRet); err != nil {
		L.Push(lua.LFalse)
		L.Push(errorValue(err))
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// baseXpcall is Lua 5.1's xpcall(f, handler): f gets no arguments, and
// the handler may be any value, failing only when an error needs it.
// gopher-lua's raises at once unless both are functions.
func baseXpcall(L *lua.LState) int {
	L.CheckAny(2)
	L.SetTop(2)
	f := L.Get(1)
	if !callable(L, f) {
		// Lua 5.1 hands this error to the handler too.
		msg := lua.LString("attempt to call a " + f.Type().String() + " value")
		f = L.NewFunction(func(L *lua.LState) int {
			L.Error(msg, 0)
			return 0
		})
	}
	L.Push(f)
	if err := (&protection{handler: L.Get(2)}).call(L, 0, lua.MultRet); err != nil {
		L.SetTop(2)
		L.Push(lua.LFalse)
		L.Push(errorValue(err))
		return 2
	}
	L.Insert(lua.LTrue, 3)
	return L.GetTop() - 2
}

func callable(L *lua.LState, v lua.LValue) bool {
	return v.Type() == lua.LTFunction || L.GetMetaField(v, "__call").Type() == lua.LTFunction
}

// Callable is callable, for the other packages that call Lua values as
// Lua 5.1 does.
func Callable(L *lua.LState, v lua.LValue) bool { return callable(L, v) }
