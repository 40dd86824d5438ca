package bindings

import (
	"math"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/runtime"
)

// indexable is what x[i] and x[i] = v need of an array, host or device.
type indexable interface {
	Shape() []int
	NDim() int
	Get(i int) (float64, error)
	Set(i int, v float64) error
}

// element is x[key]: element key of a 1-D array, or, of a larger one, the
// view row(key) makes of row key. typ names x's type in errors.
func element(L *lua.LState, typ string, x indexable, key lua.LValue, row func(i int) (lua.LValue, error)) lua.LValue {
	shape := x.Shape()
	i := luaIndex(L, typ, shape, key)
	var v lua.LValue
	var err error
	if x.NDim() == 1 {
		var f float64
		f, err = x.Get(i - 1)
		v = lua.LNumber(f)
	} else {
		v, err = row(i)
	}
	if err != nil {
		raise(L, arrayName(typ, shape), err)
	}
	return v
}

// setElement is x[key] = v, for element key of a 1-D array.
func setElement(L *lua.LState, typ string, x indexable, key, v lua.LValue) {
	if s, ok := key.(lua.LString); ok {
		badArgument(L, "%s: cannot set field %s; only elements can be set, x[i] = v", typ, string(s))
	}
	shape := x.Shape()
	i := luaIndex(L, typ, shape, key)
	if x.NDim() > 1 {
		badArgument(L, "%s: [%d] is a row, not an element; set an element as x[%d][j] = v", arrayName(typ, shape), i, i)
	}
	n, ok := v.(lua.LNumber)
	if !ok {
		badArgument(L, "%s: element must be a number, got %s", arrayName(typ, shape), typeName(v))
	}
	if err := x.Set(i-1, float64(n)); err != nil {
		raise(L, arrayName(typ, shape), err)
	}
}

// luaIndex reads key as a 1-based index into the first dimension of an
// array of the given shape; typ names the array's type in messages.
func luaIndex(L *lua.LState, typ string, shape []int, key lua.LValue) int {
	n, ok := key.(lua.LNumber)
	if !ok {
		badArgument(L, "%s: index must be an integer, got %s", arrayName(typ, shape), typeName(key))
	}
	f := float64(n)
	if f != math.Trunc(f) {
		badArgument(L, "%s: index %s is not an integer", arrayName(typ, shape), lua51.NumberString(f))
	}
	if f < 1 || f > float64(shape[0]) {
		badArgument(L, "%s: index %s out of range for shape %s (%s)", arrayName(typ, shape), lua51.NumberString(f), runtime.FormatShape(shape), indexRange(shape))
	}
	return int(f)
}

// arrayName is an array's name in messages, DeviceArray[2x3]: written only
// for a message, since formatting the shape was a tenth of an element read.
func arrayName(typ string, shape []int) string {
	return typ + "[" + runtime.FormatShape(shape) + "]"
}

// indexRange says what the indices into a shape's first dimension are.
func indexRange(shape []int) string {
	what := "indices"
	if len(shape) > 1 {
		what = "rows"
	}
	if shape[0] == 0 {
		return "it has no " + what
	}
	return what + " run from 1 to " + lua51.NumberString(float64(shape[0]))
}

// arrayElement is d[key] of a DeviceArray: a row is a DeviceArray view.
func arrayElement(L *lua.LState, a *runtime.Array, key lua.LValue) lua.LValue {
	return element(L, "DeviceArray", a, key, func(i int) (lua.LValue, error) {
		row, err := a.Row(i)
		if err != nil {
			return nil, err
		}
		return arrayValue(L, row), nil
	})
}

// arraySetElement is the DeviceArray __newindex: d[i] = v.
func arraySetElement(L *lua.LState) int {
	setElement(L, "DeviceArray", metaSelf[*runtime.Array](L, deviceArrayKind, "__newindex"), L.Get(2), L.Get(3))
	return 0
}

// hostElement is h[key] of a HostArray: a row is a HostArray view.
func hostElement(L *lua.LState, h *runtime.HostArray, key lua.LValue) lua.LValue {
	return element(L, "HostArray", h, key, func(i int) (lua.LValue, error) {
		row, err := h.Row(i)
		if err != nil {
			return nil, err
		}
		return userData(L, row, hostArrayType), nil
	})
}

// hostSetElement is the HostArray __newindex: h[i] = v.
func hostSetElement(L *lua.LState) int {
	setElement(L, "HostArray", metaSelf[*runtime.HostArray](L, hostArrayKind, "__newindex"), L.Get(2), L.Get(3))
	return 0
}
