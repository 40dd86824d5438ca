package runtime

import (
	"errors"
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// ErrBadArgument is the cause of a Lua error for a call glua's modules
// refused before doing anything: a wrong type, shape, dtype or option.
var ErrBadArgument = errors.New("bad argument")

// RaiseError raises a Lua error whose message is format and args, as
// L.RaiseError does, and remembers err as its cause. Inside Lua nothing
// differs: pcall returns the message. A host whose DoString or DoFile the
// error ends gets a *ScriptError that wraps err, so errors.Is(err,
// device.ErrOutOfMemory), errors.Is(err, ErrFreed) and errors.As to the
// out-of-memory details work across the trip through Lua.
func RaiseError(L *lua.LState, cause error, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	ud := L.NewUserData()
	ud.Value = &raised{msg: msg, cause: cause}
	L.G.Registry.RawSetString(raisedKey, ud)
	L.RaiseError("%s", msg)
}

// raisedKey holds, in the Lua registry, the last error RaiseError raised.
const raisedKey = "glua.raised"

type raised struct {
	msg   string
	cause error
}

// ScriptError is a Lua error that ended DoString or DoFile. Error is Lua's
// message, traceback included; Unwrap gives the *lua.ApiError and, where
// glua's modules or the context raised it, the Go error behind it.
type ScriptError struct {
	Lua   *lua.ApiError
	Cause error // nil when the error came from Lua code itself
}

func (e *ScriptError) Error() string { return e.Lua.Error() }

// Unwrap makes errors.Is and errors.As see both the Lua error and its
// cause.
func (e *ScriptError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Lua}
	}
	return []error{e.Lua, e.Cause}
}

// WrapLuaError turns the error of a protected call into what DoString
// returns for it: a *ScriptError that carries the Go error behind the Lua
// error, where a module raised it with RaiseError. A module that calls back
// into Lua uses it to tell an out-of-memory error from any other.
func (rt *Runtime) WrapLuaError(err error) error { return rt.scriptError(err) }

// scriptError wraps the error of a protected call of a script: the Go
// error behind it if a module raised it with RaiseError (its message is
// the end of the error's), or the context's error if that stopped it.
func (rt *Runtime) scriptError(err error) error {
	apiErr, ok := err.(*lua.ApiError)
	if !ok {
		return err
	}
	se := &ScriptError{Lua: apiErr}
	msg, _ := apiErr.Object.(lua.LString)
	if ud, ok := rt.L.G.Registry.RawGetString(raisedKey).(*lua.LUserData); ok {
		if r, ok := ud.Value.(*raised); ok && strings.HasSuffix(string(msg), r.msg) {
			se.Cause = r.cause
		}
	}
	if ctx := rt.L.Context(); se.Cause == nil && ctx != nil && ctx.Err() != nil && strings.Contains(string(msg), ctx.Err().Error()) {
		se.Cause = ctx.Err()
	}
	return se
}
