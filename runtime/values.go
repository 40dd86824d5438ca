package runtime

import (
	"errors"
	"fmt"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/lua51"
)

// Go values reach a script, and come back, through SetGlobal, Global and
// Call. The runtime decides who owns what crosses: an array Go hands in
// stays Go's (the script never frees it by dropping it), and an array Go
// takes out of the script is Kept, so that the walk that frees the
// script's dropped arrays (sweep.go) cannot free it under Go's feet.
// Turning values into Lua values needs the Lua types of arrays, which
// belong to the package of the Lua modules; that package registers a
// ValueConverter, as it registers its modules.

// Func is a Go function that scripts call: set it with SetGlobal, or pass
// it to Call. It receives the script's arguments converted as Global
// converts values, and returns results converted as SetGlobal converts
// them. A non-nil error is raised in the script as a Lua error whose
// message is the function's name and the error's text; a host whose
// DoString or Call that error ends sees the error itself (errors.Is and
// errors.As reach it).
//
// The arrays among args belong to the script: they are safe to use
// during the call, and Go code that keeps one past it calls Keep. One
// returned as it came is the script's own value again (rawequal to the
// argument), as glua's in-place kernels return theirs. An array the
// function makes and returns stays Go's; one made for the script alone
// is better given with GiveToScript, so that glua frees it as soon as the
// script drops it.
type Func func(args ...any) ([]any, error)

// A ValueConverter turns Go values into Lua values and back for
// SetGlobal, Global, Call and Func. The bindings package registers glua's.
type ValueConverter interface {
	// ToLua is v as a value of rt's Lua state. name is what a Func is
	// called in the errors it raises.
	ToLua(rt *Runtime, v any, name string) (lua.LValue, error)
	// FromLua is v as a Go value.
	FromLua(v lua.LValue) any
	// Arrays are the device arrays v holds: v itself, or those in a table
	// at any depth, so that the runtime can keep what Go takes.
	Arrays(v lua.LValue) []*Array
}

var (
	converterMu sync.Mutex
	converter   ValueConverter
)

// RegisterConverter sets the converter of every runtime. A second
// converter, or a nil one, panics, as RegisterModule does.
func RegisterConverter(c ValueConverter) {
	converterMu.Lock()
	defer converterMu.Unlock()
	if c == nil {
		panic("runtime: RegisterConverter of a nil converter")
	}
	if converter != nil {
		panic("runtime: RegisterConverter called twice")
	}
	converter = c
}

// errNoConverter is what a program without glua's modules gets from the
// methods that convert values, as require says what such a program lacks.
var errNoConverter = errors.New(`no glua value converter is linked into this program: import "github.com/gluaproject/glua", or _ "github.com/gluaproject/glua/bindings"`)

// SetGlobal sets the script's global name to v, converted to a Lua value:
//
//   - nil, bool and string become Lua's nil, boolean and string;
//   - Go's integer and float types become numbers; an integer beyond
//     ±2^53, which a Lua number cannot hold exactly, is an error;
//   - an *Array becomes a DeviceArray and a *HostArray a HostArray over
//     the same memory, not a copy: the script's changes are Go's to see.
//     The array stays Go's: the script dropping it never frees it;
//   - a []float64 or []float32 becomes a new one-dimensional HostArray of
//     float64 or float32 holding a copy of the elements;
//   - a Func, or a func(args ...any) ([]any, error), becomes a Lua
//     function calling it (see Func); a lua.LGFunction, or a
//     func(*lua.LState) int, a Lua function as gopher-lua makes one;
//   - a lua.LValue of this runtime's state is set as it is.
//
// Anything else, an array of another runtime, a freed array, and a nil
// function, table, userdata or array are errors that wrap ErrBadArgument
// (a plain nil sets the global to nil). name must be a Lua identifier.
func (rt *Runtime) SetGlobal(name string, v any) error {
	op := fmt.Sprintf("SetGlobal(%q)", name)
	c, err := rt.converterFor(op, name)
	if err != nil {
		return err
	}
	leave, err := rt.enter()
	if err != nil {
		return embedError(op, err)
	}
	defer leave()
	lv, err := c.ToLua(rt, v, name)
	if err != nil {
		return embedError(op, argumentError{err})
	}
	rt.L.SetGlobal(name, lv)
	return nil
}

// Global is the script's global name as a Go value: nil, bool, float64
// (every Lua number), string, *Array for a DeviceArray, *HostArray for a
// HostArray, and the lua.LValue itself for anything else (a table, a
// function, another userdata). An unset global is nil. The arrays it
// returns, and those in a returned table, are Kept: Go owns them now,
// and the script dropping them no longer frees them.
func (rt *Runtime) Global(name string) (any, error) {
	op := fmt.Sprintf("Global(%q)", name)
	c, err := rt.converterFor(op, name)
	if err != nil {
		return nil, err
	}
	leave, err := rt.enter()
	if err != nil {
		return nil, embedError(op, err)
	}
	defer leave()
	return rt.take(c, rt.L.GetGlobal(name)), nil
}

// Call calls the script's global function fn with args, converted as
// SetGlobal converts values, and returns its results, converted as
// Global converts them; the arrays among them are Kept. Arrays passed in
// stay Go's. A Lua error in fn is a *ScriptError, wrapped, whose cause is
// reachable with errors.Is and errors.As as DoString's is. Options.Context
// stops the call as it stops a script, and Close from another goroutine
// stops it too (the call returns ErrClosed); a call while another
// goroutine runs the runtime returns ErrInUse.
func (rt *Runtime) Call(fn string, args ...any) ([]any, error) {
	op := fmt.Sprintf("Call(%q)", fn)
	c, err := rt.converterFor(op, fn)
	if err != nil {
		return nil, err
	}
	leave, err := rt.enter()
	if err != nil {
		return nil, embedError(op, err)
	}
	defer leave()
	L := rt.L
	f := L.GetGlobal(fn)
	if _, ok := f.(*lua.LFunction); !ok && L.GetMetaField(f, "__call") == lua.LNil {
		return nil, embedError(op, argumentError{fmt.Errorf("the global %s is %s, not a function", fn, luaTypeName(f))})
	}
	values := make([]lua.LValue, len(args))
	for i, a := range args {
		if values[i], err = c.ToLua(rt, a, fmt.Sprintf("%s argument %d", op, i+1)); err != nil {
			return nil, embedError(op, argumentError{fmt.Errorf("argument %d: %w", i+1, err)})
		}
	}
	base := L.GetTop()
	defer L.SetTop(base)
	L.G.Registry.RawSetString(raisedKey, lua.LNil)
	L.Push(f)
	for _, v := range values {
		L.Push(v)
	}
	if err := lua51.PCall(L, len(values), lua.MultRet, nil); err != nil {
		err = rt.scriptError(err)
		if rt.stoppedByClose(err) == ErrClosed {
			return nil, ErrClosed
		}
		return nil, embedError(op, err)
	}
	results := make([]any, L.GetTop()-base)
	for i := range results {
		results[i] = rt.take(c, L.Get(base+1+i))
	}
	return results, nil
}

// take is v as a Go value, with the arrays it holds kept for Go.
func (rt *Runtime) take(c ValueConverter, v lua.LValue) any {
	for _, a := range c.Arrays(v) {
		_ = rt.Keep(a) // a script holds only rt's arrays: nothing to refuse
	}
	return c.FromLua(v)
}

// converterFor checks what every converting method needs: an open
// runtime, a linked converter and a global's name.
func (rt *Runtime) converterFor(op, name string) (ValueConverter, error) {
	if err := rt.usable(); err != nil {
		return nil, embedError(op, err)
	}
	if !isIdentifier(name) {
		return nil, embedError(op, argumentError{fmt.Errorf("%q is not a Lua name (letters, digits and _, not starting with a digit, not a keyword)", name)})
	}
	converterMu.Lock()
	c := converter
	converterMu.Unlock()
	if c == nil {
		return nil, embedError(op, errNoConverter)
	}
	return c, nil
}

func embedError(op string, err error) error { return fmt.Errorf("glua: %s: %w", op, err) }

// badGoArgument is the error of the Go API call op for an argument it
// cannot take (a nil function or array): glua: Scope: fn is nil.
func badGoArgument(op, problem string) error {
	return embedError(op, argumentError{errors.New(problem)})
}

// argumentError is a value a Go caller passed that the call refused:
// errors.Is(err, ErrBadArgument) holds, and the cause (ErrFreed for a
// freed array) stays reachable.
type argumentError struct{ err error }

func (e argumentError) Error() string   { return e.err.Error() }
func (e argumentError) Unwrap() []error { return []error{ErrBadArgument, e.err} }

// luaTypeName names a Lua value's type for a message: "nil", "a table".
func luaTypeName(v lua.LValue) string {
	if v == lua.LNil {
		return "nil"
	}
	return "a " + v.Type().String()
}

var luaKeywords = map[string]bool{
	"and": true, "break": true, "do": true, "else": true, "elseif": true, "end": true,
	"false": true, "for": true, "function": true, "if": true, "in": true, "local": true,
	"nil": true, "not": true, "or": true, "repeat": true, "return": true, "then": true,
	"true": true, "until": true, "while": true,
}

// isIdentifier reports whether s is a Lua 5.1 name: what a script can
// write as a global without _G["..."].
func isIdentifier(s string) bool {
	if s == "" || luaKeywords[s] {
		return false
	}
	for i, r := range s {
		letter := r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}
