// Package luaindex finds the value a Lua expression v[k] indexes, from
// inside a Go function that gopher-lua calls as the __index of a table
// further down v's chain of __index tables.
//
// gopher-lua passes such a function the last table of the chain, not v,
// and its API has no way back to v. glua's arrays need v to answer a[i]
// while their methods and fields stay plain table lookups, which cost no
// Go call (bindings/arraytypes.go). The value is in the register the
// caller's OP_GETTABLE names, so the package reads gopher-lua's call
// frames and registers at field offsets found by name when it loads,
// and checks the result on a chunk it runs. Where anything does not
// match (another gopher-lua release), Available is false and callers
// must index through a function __index instead.
package luaindex

import (
	"reflect"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// Available says that Origin works with the gopher-lua linked in.
var Available = layout.ok && check()

// Origin is the value whose __index is t, on the chain of __index
// metavalues that the Lua instruction which called the running Go
// function followed: R(B) of the caller's OP_GETTABLE, when its __index is
// t, or the first value further along whose __index is. ok is false when
// the running function was not called by an OP_GETTABLE (from Go, or by a
// Lua call), or no value on the chain has t as its __index.
func Origin(L *lua.LState, t *lua.LTable) (lua.LValue, bool) {
	if !Available {
		return lua.LNil, false
	}
	return origin(L, t)
}

func origin(L *lua.LState, t *lua.LTable) (lua.LValue, bool) {
	v, ok := indexed(L)
	for i := 0; ok && i < 100; i++ {
		mt, isTable := L.GetMetatable(v).(*lua.LTable)
		if !isTable {
			return lua.LNil, false
		}
		next := mt.RawGetString("__index")
		if next == t {
			return v, true
		}
		v = next
	}
	return lua.LNil, false
}

// indexed is R(B) of the OP_GETTABLE that the running Go function's
// caller is executing.
func indexed(L *lua.LState) (lua.LValue, bool) {
	at := func(p unsafe.Pointer, off uintptr) unsafe.Pointer { return unsafe.Add(p, off) }
	frame := *(*unsafe.Pointer)(at(unsafe.Pointer(L), layout.current))
	if frame == nil {
		return lua.LNil, false
	}
	caller := *(*unsafe.Pointer)(at(frame, layout.parent))
	if caller == nil {
		return lua.LNil, false
	}
	fn := *(**lua.LFunction)(at(caller, layout.fn))
	pc := *(*int)(at(caller, layout.pc))
	if fn == nil || fn.IsG || pc < 1 || pc > len(fn.Proto.Code) {
		return lua.LNil, false
	}
	inst := fn.Proto.Code[pc-1] // the VM moves Pc past an instruction before running it
	if int(inst>>26) != lua.OP_GETTABLE {
		return lua.LNil, false
	}
	reg := *(*unsafe.Pointer)(at(unsafe.Pointer(L), layout.reg))
	values := *(*[]lua.LValue)(at(reg, layout.array))
	i := *(*int)(at(caller, layout.localBase)) + int(inst&0x1ff)
	if i < 0 || i >= len(values) {
		return lua.LNil, false
	}
	return values[i], true
}

// layout holds the offsets indexed reads: the LState's current call frame
// and registers, a frame's function, parent, program counter and first
// register, and the registers' values.
var layout = func() (f struct {
	ok                                             bool
	current, reg, fn, parent, pc, localBase, array uintptr
}) {
	state := reflect.TypeFor[lua.LState]()
	cur, ok1 := state.FieldByName("currentFrame")
	reg, ok2 := state.FieldByName("reg")
	if !ok1 || !ok2 || cur.Type.Kind() != reflect.Pointer || reg.Type.Kind() != reflect.Pointer {
		return f
	}
	frame, registry := cur.Type.Elem(), reg.Type.Elem()
	field := func(t reflect.Type, name string, want reflect.Type) (uintptr, bool) {
		sf, ok := t.FieldByName(name)
		return sf.Offset, ok && sf.Type == want
	}
	var ok [5]bool
	f.fn, ok[0] = field(frame, "Fn", reflect.TypeFor[*lua.LFunction]())
	f.parent, ok[1] = field(frame, "Parent", cur.Type)
	f.pc, ok[2] = field(frame, "Pc", reflect.TypeFor[int]())
	f.localBase, ok[3] = field(frame, "LocalBase", reflect.TypeFor[int]())
	f.array, ok[4] = field(registry, "array", reflect.TypeFor[[]lua.LValue]())
	f.current, f.reg = cur.Offset, reg.Offset
	f.ok = ok == [5]bool{true, true, true, true, true}
	return f
}()

// check runs origin where it must find its value, and where it must not,
// on a scratch state: the offsets alone do not prove that gopher-lua
// still runs OP_GETTABLE as this package expects.
func check() (works bool) {
	defer func() {
		if recover() != nil {
			works = false
		}
	}()
	L := lua.NewState()
	defer L.Close()
	inner := L.NewTable()
	L.SetMetatable(inner, L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{"__index": func(L *lua.LState) int {
		v, ok := origin(L, inner)
		if !ok {
			v = lua.LString("none")
		}
		L.Push(v)
		return 1
	}}))
	L.SetGlobal("inner", inner)
	err := L.DoString(`
		local a = setmetatable({}, {__index = inner})
		local b = setmetatable({}, {__index = a})
		local t = {a, b}
		local found = a[1] == a and b[2] == a and t[1][3] == a and t[2][4] == a
		local mt = getmetatable(inner).__index
		ok = found and mt(inner, 1) == "none" and inner[1] == "none"`)
	return err == nil && L.GetGlobal("ok") == lua.LTrue
}
