package bindings

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

// registerHostType makes the HostArray metatable: fields, methods and
// h[i] through __index, h[i] = v through __newindex, #h and tostring.
func registerHostType(rt *runtime.Runtime, L *lua.LState) {
	methods := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"to_table": hostToTableMethod,
		"reshape":  hostReshape,
		"rows":     hostRows,
		"save_npy": func(L *lua.LState) int { return hostSaveNPY(rt, L) },
		"flush":    hostFlush,
	})
	mt := L.SetFuncs(L.NewTypeMetatable(hostArrayType), map[string]lua.LGFunction{
		"__index":    hostIndexer(methods),
		"__newindex": hostSetElement,
		"__len":      hostLen,
		"__tostring": hostString,
	})
	mt.RawSetString(methodsField, methods)
	setOperators(L, mt, rt)
}

// hostFlush is h:flush(): a writable mapped file's changes written now.
func hostFlush(L *lua.LState) int {
	if err := selfHost(L, "flush").Flush(); err != nil {
		raise(L, "HostArray:flush", err)
	}
	return 0
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

// hostIndexer is __index: h.shape and the other fields are computed,
// other names are looked up among the methods, and h[i] is an element or
// a row.
func hostIndexer(methods *lua.LTable) lua.LGFunction {
	return func(L *lua.LState) int {
		h := metaSelf[*runtime.HostArray](L, hostArrayKind, "__index")
		if key, ok := L.Get(2).(lua.LString); ok {
			L.Push(hostField(L, h, key, methods))
		} else {
			L.Push(hostElement(L, h, L.Get(2)))
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
	m := methods.RawGet(key)
	if m == lua.LNil {
		noSuchName(L, "HostArray", key, hostFields, methods)
	}
	return m
}

func hostLen(L *lua.LState) int {
	L.Push(lua.LNumber(metaSelf[*runtime.HostArray](L, hostArrayKind, "__len").Size()))
	return 1
}

// hostString is tostring(h): the header and, beneath it, the elements.
func hostString(L *lua.LState) int {
	s, err := metaSelf[*runtime.HostArray](L, hostArrayKind, "__tostring").Repr()
	if err != nil {
		raise(L, "tostring(HostArray)", err)
	}
	L.Push(lua.LString(s))
	return 1
}

func selfHost(L *lua.LState, method string) *runtime.HostArray {
	return selfOf[*runtime.HostArray](L, hostArrayKind, method)
}

func errTooLargeForTable(n int) error {
	return fmt.Errorf("%d elements are too many for a Lua table; use copy_to_host", n)
}
