package bindings

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

// registerHostType makes the HostArray metatable: fields and methods
// through __index, h[i] = v through __newindex, #h and tostring.
func registerHostType(rt *runtime.Runtime, L *lua.LState) {
	methods := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"to_table": hostToTableMethod,
		"reshape":  hostReshape,
		"rows":     hostRows,
		"save_npy": func(L *lua.LState) int { return hostSaveNPY(rt, L) },
	})
	L.G.Registry.RawSetString(hostArrayType+methodsSuffix, methods)
	L.SetFuncs(L.NewTypeMetatable(hostArrayType), map[string]lua.LGFunction{
		"__index":    hostIndexer(methods),
		"__newindex": hostSetElement,
		"__len":      hostLen,
		"__tostring": hostString,
	})
}

func hostToTableMethod(L *lua.LState) int {
	t, err := hostToTable(L, selfHost(L, "to_table"))
	if err != nil {
		raise(L, "HostArray:to_table", err)
	}
	L.Push(t)
	return 1
}

func hostReshape(L *lua.LState) int {
	const name = "HostArray:reshape"
	h := selfHost(L, "reshape")
	v, err := h.Reshape(checkReshape(L, name, 2))
	if err != nil {
		raise(L, name, err)
	}
	pushHost(L, v)
	return 1
}

func hostRows(L *lua.LState) int {
	const name = "HostArray:rows"
	h := selfHost(L, "rows")
	v, err := h.Rows(checkInt(L, name, 2, "first row"), checkInt(L, name, 3, "last row"))
	if err != nil {
		raise(L, name, err)
	}
	pushHost(L, v)
	return 1
}

// hostSaveNPY is h:save_npy(path).
func hostSaveNPY(rt *runtime.Runtime, L *lua.LState) int {
	const name = "HostArray:save_npy"
	h := selfHost(L, "save_npy")
	saveNPY(L, rt, name, checkPath(L, name, 2), h)
	return 0
}

// hostIndexer is __index: h[i] is an element, h.shape and the other fields
// are computed, anything else is looked up among the methods.
func hostIndexer(methods *lua.LTable) lua.LGFunction {
	return func(L *lua.LState) int {
		h := L.CheckUserData(1).Value.(*runtime.HostArray)
		switch key := L.Get(2).(type) {
		case lua.LNumber:
			v, err := h.Get(hostIndex(L, h, key))
			if err != nil {
				raise(L, "HostArray", err)
			}
			L.Push(lua.LNumber(v))
		case lua.LString:
			L.Push(hostField(L, h, key, methods))
		default:
			L.Push(lua.LNil)
		}
		return 1
	}
}

func hostField(L *lua.LState, h *runtime.HostArray, key lua.LString, methods *lua.LTable) lua.LValue {
	switch key {
	case "shape":
		return shapeTable(L, h.Shape())
	case "dtype":
		return lua.LString(h.DType().String())
	case "size":
		return lua.LNumber(h.Size())
	case "nbytes":
		return lua.LNumber(h.NBytes())
	case "ndim":
		return lua.LNumber(h.NDim())
	case "pinned":
		return lua.LBool(h.Pinned())
	case "mapped":
		return lua.LBool(h.Mapped())
	}
	return methods.RawGet(key)
}

func hostSetElement(L *lua.LState) int {
	h := L.CheckUserData(1).Value.(*runtime.HostArray)
	key, ok := L.Get(2).(lua.LNumber)
	if !ok {
		badArgument(L, "HostArray: cannot set field %s; only elements h[i] can be set", lua.LVAsString(L.Get(2)))
	}
	v, ok := L.Get(3).(lua.LNumber)
	if !ok {
		badArgument(L, "HostArray: element must be a number, got %s", typeName(L.Get(3)))
	}
	if err := h.Set(hostIndex(L, h, key), float64(v)); err != nil {
		raise(L, "HostArray", err)
	}
	return 0
}

func hostLen(L *lua.LState) int {
	L.Push(lua.LNumber(L.CheckUserData(1).Value.(*runtime.HostArray).Size()))
	return 1
}

// hostString is tostring(h): the header and, beneath it, the elements.
func hostString(L *lua.LState) int {
	L.Push(lua.LString(L.CheckUserData(1).Value.(*runtime.HostArray).Repr()))
	return 1
}

// hostIndex converts a 1-based Lua index into a 0-based flat index.
func hostIndex(L *lua.LState, h *runtime.HostArray, key lua.LNumber) int {
	i, ok := intOf(float64(key))
	if !ok || i < 1 || i > h.Size() {
		badArgument(L, "HostArray: index %v out of range 1..%d", key, h.Size())
	}
	return i - 1
}

func selfHost(L *lua.LState, method string) *runtime.HostArray {
	h := toHost(L, 1)
	if h == nil {
		badArgument(L, "HostArray:%s: called on %s; call it as h:%s(...)", method, typeName(L.Get(1)), method)
	}
	return h
}

func errTooLargeForTable(n int) error {
	return fmt.Errorf("%d elements are too many for a Lua table; use copy_to_host", n)
}
