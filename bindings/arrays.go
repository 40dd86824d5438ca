package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

// registerArrayTypes creates the DeviceArray and HostArray metatables once
// per Lua state; every module loader calls it, since any of them may be
// required first.
func registerArrayTypes(rt *runtime.Runtime, L *lua.LState) {
	if _, ok := L.GetTypeMetatable(deviceArrayType).(*lua.LTable); ok {
		return
	}
	dmethods := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"copy_to_host": arrayCopyToHost,
		"copy_from":    func(L *lua.LState) int { return arrayCopyFrom(rt, L) },
		"to_table":     arrayToTable,
		"reshape":      arrayReshape,
		"rows":         arrayRows,
		"clone":        arrayClone,
		"free":         arrayFree,
		"is_freed":     arrayIsFreed,
		"save_npy":     func(L *lua.LState) int { return arraySaveNPY(rt, L) },
	})
	dmt := L.NewTypeMetatable(deviceArrayType)
	L.SetFuncs(dmt, map[string]lua.LGFunction{
		"__index":    arrayIndexer(dmethods),
		"__newindex": arraySetElement,
		"__len":      arrayLen,
		"__tostring": arrayString,
	})
	dmt.RawSetString(methodsField, dmethods)
	setOperators(L, dmt, rt)
	types := &arrayTypes{generic: dmt, methods: dmethods, len: dmt.RawGetString("__len"),
		tostring: dmt.RawGetString("__tostring"), newindex: dmt.RawGetString("__newindex"),
		byShape: make(map[shapeKey]*lua.LTable)}
	ud := L.NewUserData()
	ud.Value = types
	L.G.Registry.RawSetString(arrayTypesKey, ud)
	registerHostType(rt, L)
}

func arrayIsFreed(L *lua.LState) int {
	L.Push(lua.LBool(selfArray(L, "is_freed").IsFreed()))
	return 1
}

// arrayIndexer is the generic DeviceArray __index: a field, a method, or
// d[i], an element or a row; any other name is an error.
func arrayIndexer(methods *lua.LTable) lua.LGFunction {
	return func(L *lua.LState) int {
		a := metaSelf[*runtime.Array](L, deviceArrayKind, "__index")
		key, ok := L.Get(2).(lua.LString)
		if !ok {
			L.Push(arrayElement(L, a, L.Get(2)))
		} else if v, ok := arrayField(L, a, string(key)); ok {
			L.Push(v)
		} else if m := methods.RawGet(key); m != lua.LNil {
			L.Push(m)
		} else {
			noSuchName(L, "DeviceArray", key, deviceFields, methods)
		}
		return 1
	}
}

func arrayLen(L *lua.LState) int {
	L.Push(lua.LNumber(metaSelf[*runtime.Array](L, deviceArrayKind, "__len").Size()))
	return 1
}

// arrayString is tostring(d): the header and, beneath it, the elements.
func arrayString(L *lua.LState) int {
	s, err := metaSelf[*runtime.Array](L, deviceArrayKind, "__tostring").Repr()
	if err != nil {
		raise(L, "tostring(DeviceArray)", err)
	}
	L.Push(lua.LString(s))
	return 1
}

// fixedFields are the DeviceArray properties that arrays of one shape and
// dtype share; shape, a fresh table each time, is the other one.
var fixedFields = [...]string{"dtype", "size", "nbytes", "ndim"}

// arrayField is a's property key, if key names one.
func arrayField(L *lua.LState, a *runtime.Array, key string) (lua.LValue, bool) {
	switch key {
	case "shape":
		return shapeTable(L, a.Shape()), true
	case "dtype":
		return lua.LString(a.DType().String()), true
	case "size":
		return lua.LNumber(a.Size()), true
	case "nbytes":
		return lua.LNumber(a.NBytes()), true
	case "ndim":
		return lua.LNumber(a.NDim()), true
	}
	return lua.LNil, false
}

// selfArray is the DeviceArray a method was called on. Calling a method with
// a dot instead of a colon is the usual mistake, so the error says so.
func selfArray(L *lua.LState, method string) *runtime.Array {
	return selfOf[*runtime.Array](L, deviceArrayKind, method)
}

func arrayCopyToHost(L *lua.LState) int {
	const name = "DeviceArray:copy_to_host"
	a := selfArray(L, "copy_to_host")
	var dst *runtime.HostArray
	if L.Get(2) != lua.LNil {
		dst = checkHost(L, name, 2)
	}
	h, err := a.CopyToHost(dst)
	if err != nil {
		raise(L, name, err)
	}
	if dst != nil {
		L.Push(L.Get(2))
	} else {
		pushHost(L, h)
	}
	return 1
}

// arrayCopyFrom uploads into the array's memory from a HostArray, a Lua
// table or another DeviceArray, without allocating device memory.
func arrayCopyFrom(rt *runtime.Runtime, L *lua.LState) int {
	const name = "DeviceArray:copy_from"
	a := selfArray(L, "copy_from")
	var err error
	switch src := L.Get(2).(type) {
	case *lua.LTable:
		h, terr := tableToHost(src, a.DType())
		if terr != nil {
			argError(L, name, 2, "%s", terr)
		}
		err = a.CopyFrom(h)
	default:
		if h := toHost(L, 2); h != nil {
			err = a.CopyFrom(h)
		} else if d := toArray(L, 2); d != nil {
			err = a.CopyFromDevice(d)
		} else {
			argError(L, name, 2, "HostArray, DeviceArray or table expected, got %s", typeName(src))
		}
	}
	if err != nil {
		raise(L, name, err)
	}
	L.Push(L.Get(1))
	return 1
}

func arrayToTable(L *lua.LState) int {
	const name = "DeviceArray:to_table"
	a := selfArray(L, "to_table")
	if a.Size() > maxTableElements {
		raise(L, name, errTooLargeForTable(a.Size()))
	}
	h, err := a.CopyToHost(nil)
	if err != nil {
		raise(L, name, err)
	}
	t, err := hostToTable(L, h)
	if err != nil {
		raise(L, name, err)
	}
	L.Push(t)
	return 1
}

func arrayReshape(L *lua.LState) int {
	const name = "DeviceArray:reshape"
	a := selfArray(L, "reshape")
	shape := checkReshape(L, name, 2)
	v, err := a.Reshape(shape)
	if err != nil {
		raise(L, name, err)
	}
	pushArray(L, v)
	return 1
}

// checkReshape reads reshape's argument: a table of dimensions, one of which
// may be -1, or a single number.
func checkReshape(L *lua.LState, name string, n int) []int {
	switch v := L.Get(n).(type) {
	case *lua.LTable:
		shape, err := shapeOf(v, true)
		if err != nil {
			argError(L, name, n, "%s", err)
		}
		return shape
	case lua.LNumber:
		d, ok := intOf(float64(v))
		if !ok || d < -1 {
			argError(L, name, n, "shape must be a non-negative integer or a table of them, got %s", valueText(v))
		}
		return []int{d}
	default:
		argError(L, name, n, "shape expected (a number or a table of numbers), got %s", typeName(v))
		return nil
	}
}

func arrayRows(L *lua.LState) int {
	const name = "DeviceArray:rows"
	a := selfArray(L, "rows")
	i := checkInt(L, name, 2, "first row")
	j := checkInt(L, name, 3, "last row")
	v, err := a.Rows(i, j)
	if err != nil {
		raise(L, name, err)
	}
	pushArray(L, v)
	return 1
}

// arraySaveNPY is d:save_npy(path): the array downloaded and written.
func arraySaveNPY(rt *runtime.Runtime, L *lua.LState) int {
	const name = "DeviceArray:save_npy"
	a := selfArray(L, "save_npy")
	saveNPY(L, rt, name, checkPath(L, name, 2), a)
	return 0
}

func arrayClone(L *lua.LState) int {
	c, err := selfArray(L, "clone").Clone()
	if err != nil {
		raise(L, "DeviceArray:clone", err)
	}
	pushNew(L, c.Runtime(), c)
	return 1
}

func arrayFree(L *lua.LState) int {
	if err := selfArray(L, "free").Free(); err != nil {
		raise(L, "DeviceArray:free", err)
	}
	return 0
}
