package bindings

import (
	"errors"
	"fmt"
	"reflect"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// converter turns a Go host's values into Lua values and back, for
// Runtime.SetGlobal, Global, Call and Func (runtime/values.go says which
// values and who owns the arrays). Arrays become the same DeviceArray and
// HostArray userdata the modules make, so a script cannot tell an array a
// host passed from one it made.
type converter struct{}

// maxExactInteger is the largest integer a Lua number (a float64) holds
// exactly, with every integer below it.
const maxExactInteger = 1 << 53

func (c converter) ToLua(rt *runtime.Runtime, v any, name string) (lua.LValue, error) {
	L := rt.Lua()
	switch v := v.(type) {
	case nil:
		return lua.LNil, nil
	case bool:
		return lua.LBool(v), nil
	case string:
		return lua.LString(v), nil
	case *runtime.Array:
		if err := usableHere(rt, v); err != nil {
			return nil, err
		}
		registerArrayTypes(rt, L)
		return arrayValue(L, v), nil
	case *runtime.HostArray:
		if v == nil {
			return nil, errors.New("the *HostArray is nil")
		}
		registerArrayTypes(rt, L)
		return userData(L, v, hostArrayType), nil
	case []float64:
		return c.hostCopy(rt, len(v), device.Float64, func(h *runtime.HostArray) {
			for i, x := range v {
				h.Set(i, x)
			}
		})
	case []float32:
		return c.hostCopy(rt, len(v), device.Float32, func(h *runtime.HostArray) {
			for i, x := range v {
				h.Set(i, float64(x))
			}
		})
	case runtime.Func:
		return c.function(rt, name, v)
	case func(args ...any) ([]any, error):
		return c.function(rt, name, v)
	case lua.LGFunction:
		return luaFunction(L, v)
	case func(*lua.LState) int:
		return luaFunction(L, v)
	case lua.LValue:
		if isNil(v) {
			return nil, fmt.Errorf("the %T is nil", v)
		}
		return v, nil
	}
	if n, ok, err := number(v); ok {
		return n, err
	}
	return nil, fmt.Errorf("a %T has no Lua value (pass a number, string, bool, *Array, *HostArray, []float64, []float32, Func or lua.LValue)", v)
}

// function is fn as a Lua function calling it; a nil fn, which a script
// would call into a Go panic, is an error.
func (c converter) function(rt *runtime.Runtime, name string, fn runtime.Func) (lua.LValue, error) {
	if fn == nil {
		return nil, errors.New("the function is nil")
	}
	return rt.Lua().NewFunction(c.goFunction(rt, name, fn)), nil
}

// luaFunction is fn as gopher-lua makes a Go function a Lua one, if it is
// not nil.
func luaFunction(L *lua.LState, fn lua.LGFunction) (lua.LValue, error) {
	if fn == nil {
		return nil, errors.New("the function is nil")
	}
	return L.NewFunction(fn), nil
}

// isNil says whether v is a nil pointer (a nil *lua.LTable, *lua.LUserData,
// *lua.LFunction...) or channel held as a Lua value.
func isNil(v lua.LValue) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Chan, reflect.Func, reflect.Map, reflect.Slice:
		return rv.IsNil()
	}
	return false
}

// usableHere refuses an array a script of rt could not use.
func usableHere(rt *runtime.Runtime, a *runtime.Array) error {
	switch {
	case a == nil:
		return errors.New("the *Array is nil")
	case a.Runtime() == nil:
		return errors.New("the Array was not made by a runtime (a zero Array)")
	case a.Runtime() != rt:
		return errors.New("the array belongs to another runtime")
	case a.IsFreed():
		return runtime.ErrFreed
	}
	return nil
}

// number is v as a Lua number, when v is of one of Go's integer or float
// types (not a type named after one: a device.DType is no number to a
// script); ok says whether it is.
func number(v any) (n lua.LValue, ok bool, err error) {
	rv := reflect.ValueOf(v)
	if rv.Type().PkgPath() != "" {
		return nil, false, nil
	}
	switch rv.Kind() {
	case reflect.Float32, reflect.Float64:
		return lua.LNumber(rv.Float()), true, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if i := rv.Int(); i > maxExactInteger || i < -maxExactInteger {
			return nil, true, fmt.Errorf("the integer %d is beyond ±2^53, where a Lua number cannot hold it exactly", i)
		}
		return lua.LNumber(rv.Int()), true, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if u := rv.Uint(); u > maxExactInteger {
			return nil, true, fmt.Errorf("the integer %d is beyond 2^53, where a Lua number cannot hold it exactly", u)
		}
		return lua.LNumber(rv.Uint()), true, nil
	}
	return nil, false, nil
}

// hostCopy is a new one-dimensional HostArray of n elements of dt that
// fill writes; it counts against the runtime's host memory limit as
// cuda.host_array's arrays do.
func (converter) hostCopy(rt *runtime.Runtime, n int, dt device.DType, fill func(*runtime.HostArray)) (lua.LValue, error) {
	h, err := rt.NewHostArray([]int{n}, dt, false)
	if err != nil {
		return nil, err
	}
	fill(h)
	registerArrayTypes(rt, rt.Lua())
	return userData(rt.Lua(), h, hostArrayType), nil
}

func (converter) FromLua(v lua.LValue) any {
	switch v := v.(type) {
	case *lua.LNilType:
		return nil
	case lua.LBool:
		return bool(v)
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		return string(v)
	case *lua.LUserData:
		switch x := v.Value.(type) {
		case *runtime.Array:
			return x
		case *runtime.HostArray:
			return x
		}
	}
	return v
}

func (converter) Arrays(v lua.LValue) []*runtime.Array {
	return collectArrays(v, map[*lua.LTable]bool{}, nil)
}

// goFunction is fn as a Lua function called name in its errors: the
// script's arguments converted for Go, the results for Lua. An error of
// fn's is raised with RaiseError, so that a host sees fn's own error.
func (c converter) goFunction(rt *runtime.Runtime, name string, fn runtime.Func) lua.LGFunction {
	return func(L *lua.LState) int {
		args := make([]any, L.GetTop())
		for i := range args {
			args[i] = c.FromLua(L.Get(i + 1))
		}
		results, err := fn(args...)
		if err != nil {
			raise(L, name, err)
		}
		values := make([]lua.LValue, len(results))
		for i, r := range results {
			if values[i] = sameArgument(L, args, r); values[i] != nil {
				continue
			}
			if values[i], err = c.ToLua(rt, r, name); err != nil {
				raise(L, name, fmt.Errorf("result %d: %w", i+1, err))
			}
		}
		for _, v := range values {
			L.Push(v)
		}
		return len(values)
	}
}

// sameArgument is the script's own value for a result that is one of the
// arrays it passed, so that an in-place function returning its argument
// (as glua's kernels do) gives back a value equal to it; nil otherwise.
func sameArgument(L *lua.LState, args []any, r any) lua.LValue {
	switch r.(type) {
	case *runtime.Array, *runtime.HostArray:
		for i, a := range args {
			if a == r {
				return L.Get(i + 1)
			}
		}
	}
	return nil
}
