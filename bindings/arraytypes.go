package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/luaindex"
	"github.com/gluaproject/glua/runtime"
)

// A DeviceArray's properties (d.shape, d.dtype, ...) are computed, so its
// generic metatable's __index is a Go function, and gopher-lua calls it for
// every method lookup too: about half of what the VM spends on
// cuda.device_array(n):free(). Arrays of one shape and dtype share their
// properties, so they get a metatable whose __index is a plain table of
// the methods and the fixed properties, with only the fresh shape table
// left to a function; method calls then cost a table lookup. Such
// metatables are kept per Lua state for up to maxShapeTypes (shape, dtype)
// pairs of up to four dimensions; other arrays get the generic one.
const (
	arrayTypesKey = "glua.DeviceArray.types"
	maxShapeTypes = 1024
)

type shapeKey struct {
	dtype device.DType
	ndim  int
	dims  [4]int
}

// arrayTypes is the registry entry behind arrayTypesKey.
type arrayTypes struct {
	generic                 *lua.LTable
	methods                 *lua.LTable
	len, tostring, newindex lua.LValue
	byShape                 map[shapeKey]*lua.LTable
	// last is the most recent lookup: loops allocate one shape over and
	// over, and comparing a key is cheaper than hashing it.
	lastKey shapeKey
	lastMT  *lua.LTable
}

// metatable is the metatable for a: its shape's, made on first use, or the
// generic one.
func (t *arrayTypes) metatable(L *lua.LState, a *runtime.Array) *lua.LTable {
	n := a.NDim()
	if n > 4 || !luaindex.Available {
		return t.generic
	}
	k := shapeKey{dtype: a.DType(), ndim: n}
	for i := 0; i < n; i++ {
		k.dims[i] = a.Dim(i)
	}
	if t.lastMT != nil && k == t.lastKey {
		return t.lastMT
	}
	if mt, ok := t.byShape[k]; ok {
		t.lastKey, t.lastMT = k, mt
		return mt
	}
	if len(t.byShape) >= maxShapeTypes {
		return t.generic
	}
	mt := t.newShapeMetatable(L, a)
	t.byShape[k] = mt
	return mt
}

// newShapeMetatable is the metatable of a's shape and dtype: its __index
// is a table holding the methods and the fields every such array shares,
// so that reading one calls no Go function. What the table lacks comes
// from its own __index: shape, a fresh table each time, d[i], for which
// luaindex finds the array that was indexed, and the error for a name
// arrays do not have.
func (t *arrayTypes) newShapeMetatable(L *lua.LState, a *runtime.Array) *lua.LTable {
	index := L.NewTable()
	t.methods.ForEach(func(name, fn lua.LValue) { index.RawSet(name, fn) })
	for _, name := range fixedFields {
		v, _ := arrayField(L, a, name)
		index.RawSetString(name, v)
	}
	shape := a.Shape()
	fresh := L.NewTable()
	fresh.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		switch key := L.Get(2).(type) {
		case lua.LString:
			if key != "shape" {
				noSuchName(L, "DeviceArray", key, deviceFields, t.methods)
			}
			L.Push(shapeTable(L, shape))
		default:
			L.Push(arrayElement(L, indexedArray(L, index, shape), key))
		}
		return 1
	}))
	index.Metatable = fresh
	mt := L.NewTable()
	mt.RawSetString("__index", index)
	mt.RawSetString("__newindex", t.newindex)
	mt.RawSetString("__len", t.len)
	mt.RawSetString("__tostring", t.tostring)
	copyOperators(mt, t.generic)
	return mt
}

// indexedArray is the DeviceArray whose metatable's __index is index,
// that the running d[i] indexes. Go code reaches index only through
// gopher-lua's API (L.GetTable), which tells it no array: that is an
// error naming Get and Row.
func indexedArray(L *lua.LState, index *lua.LTable, shape []int) *runtime.Array {
	if v, ok := luaindex.Origin(L, index); ok {
		if a, ok := userValue[*runtime.Array](v); ok {
			return a
		}
	}
	badArgument(L, "DeviceArray[%s]: d[i] is for Lua code; from Go, use Array.Get or Array.Row", runtime.FormatShape(shape))
	return nil
}

// giver is what pushNew needs of the runtime.
type giver interface {
	GiveToScript(a *runtime.Array) error
}

// pushNew pushes an array made for the script and gives it to the script:
// once no Lua value refers to it, the runtime frees it without waiting for
// Go's collector.
func pushNew(L *lua.LState, rt giver, a *runtime.Array) {
	pushArray(L, a)
	_ = rt.GiveToScript(a) // rt's own array, just made: nothing to refuse
}

func pushArray(L *lua.LState, a *runtime.Array) { L.Push(arrayValue(L, a)) }

// arrayValue is a as a DeviceArray; the array types must be registered.
func arrayValue(L *lua.LState, a *runtime.Array) *lua.LUserData {
	ud := L.NewUserData()
	ud.Value = a
	ud.Metatable = L.G.Registry.RawGetString(arrayTypesKey).(*lua.LUserData).Value.(*arrayTypes).metatable(L, a)
	return ud
}
