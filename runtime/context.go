package runtime

import (
	"context"

	"github.com/gluaproject/glua/internal/lua51"
	lua "github.com/yuin/gopher-lua"
)

// SetContext makes ctx the context the runtime's Lua code runs under from
// now on, in place of Options.Context; nil runs it under none. A host that
// runs a script piece by piece (glua's REPL, one statement at a time)
// gives each piece its own context, to stop one without stopping the
// next. A cancelled or expired context stops the script at its next
// instruction; when it was cancelled with a cause (context.WithCancelCause,
// context.WithTimeoutCause) the error says the cause.
func (rt *Runtime) SetContext(ctx context.Context) {
	if ctx == nil {
		rt.L.RemoveContext()
	} else {
		rt.L.SetContext(causeContext{ctx})
	}
	lua51.KeepHook(rt.L)
}

// causeContext is a context whose Err reports its cause. gopher-lua stops
// a script with ctx.Err()'s message, which would otherwise always be
// "context canceled" or "context deadline exceeded", whatever the host
// said when it cancelled.
type causeContext struct{ context.Context }

func (c causeContext) Err() error {
	err := c.Context.Err()
	if err == nil {
		return nil
	}
	cause := context.Cause(c.Context)
	if cause == nil || cause == err {
		return err
	}
	return &stopError{cause: cause, err: err}
}

// stopError is the cause's message; errors.Is sees both the cause and
// context.Canceled or context.DeadlineExceeded.
type stopError struct{ cause, err error }

func (e *stopError) Error() string   { return e.cause.Error() }
func (e *stopError) Unwrap() []error { return []error{e.cause, e.err} }

// followContexts makes coroutines run under the context of whoever resumes
// them. gopher-lua gives a coroutine a child of the context its creator
// ran under, fixed for good: one made by an earlier piece of a script
// would not stop when the current piece's context is cancelled, and one
// made under a context cancelled since could never run again. Both
// coroutine.resume and the functions coroutine.wrap returns follow.
func followContexts(L *lua.LState) {
	co, ok := L.GetGlobal("coroutine").(*lua.LTable)
	if !ok {
		return
	}
	if resume, ok := co.RawGetString("resume").(*lua.LFunction); ok && resume.IsG {
		co.RawSetString("resume", L.NewFunction(func(L *lua.LState) int {
			if th, ok := L.Get(1).(*lua.LState); ok {
				followContext(th, L)
			}
			return resume.GFunction(L)
		}))
	}
	if wrap, ok := co.RawGetString("wrap").(*lua.LFunction); ok && wrap.IsG {
		co.RawSetString("wrap", L.NewFunction(func(L *lua.LState) int {
			n := wrap.GFunction(L)
			followWrapped(L.Get(-1))
			return n
		}))
	}
}

// followWrapped makes the function coroutine.wrap returned, a Go closure
// over its coroutine, pass its caller's context on before resuming.
func followWrapped(v lua.LValue) {
	fn, ok := v.(*lua.LFunction)
	if !ok || !fn.IsG || len(fn.Upvalues) != 1 {
		return
	}
	th, ok := fn.Upvalues[0].Value().(*lua.LState)
	if !ok {
		return
	}
	call := fn.GFunction
	fn.GFunction = func(L *lua.LState) int {
		followContext(th, L)
		return call(L)
	}
}

func followContext(th, L *lua.LState) {
	if ctx := L.Context(); ctx != nil {
		th.SetContext(ctx)
	} else if th.Context() != nil {
		th.RemoveContext()
	}
}
