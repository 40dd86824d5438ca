package luaindex

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// If this fails, gopher-lua's call frames or registers have changed:
// Origin finds nothing, and glua's arrays fall back to a Go __index for
// every lookup, which is correct but slower. Update layout for the new
// release.
func TestGopherLuaLayoutIsKnown(t *testing.T) {
	if !layout.ok {
		t.Fatal("gopher-lua's LState, callFrame or registry fields are not what layout expects")
	}
	if !Available {
		t.Fatal("the layout is known, but origin does not find the indexed value on the check's chunk")
	}
}

// Origin finds the value whose __index is the last table, through any
// chain of tables, from temporaries and upvalues as from locals, in
// coroutines, and nothing where the Go function was not reached by
// indexing.
func TestOriginFindsTheIndexedValue(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	last := L.NewTable()
	L.SetMetatable(last, L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{"__index": func(L *lua.LState) int {
		v, ok := Origin(L, last)
		if !ok {
			v = lua.LString("none")
		}
		L.Push(v)
		return 1
	}}))
	L.SetGlobal("last", last)
	L.SetGlobal("fromgo", L.NewFunction(func(L *lua.LState) int {
		L.Push(L.GetTable(L.Get(1), lua.LNumber(1)))
		return 1
	}))
	err := L.DoString(`
		local a = setmetatable({}, {__index = last})
		local function chain(n) local v = a for i = 1, n do v = setmetatable({}, {__index = v}) end return v end
		local up = chain(3)
		local function viaUpvalue() return up[1] end
		assert(a[1] == a, "a local")
		local c = chain(5)
		assert(c[2] == a, "a chain of five: the value whose __index is last")
		assert(viaUpvalue() == a, "an upvalue")
		assert(({a})[1][7] == a, "a temporary")
		local co = coroutine.wrap(function() coroutine.yield(chain(2)[1] == a) end)
		assert(co(), "in a coroutine")
		assert(a.x == "none", "a constant string key is another instruction")
		assert(fromgo(a) == "none", "indexed from Go")
		assert(getmetatable(last).__index(last, 1) == "none", "called from Lua")
		assert(last[1] == "none", "the last table itself")`)
	if err != nil {
		t.Fatal(err)
	}
}
