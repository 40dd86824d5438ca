package luaheap

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

func TestLayoutIsKnown(t *testing.T) {
	if !layout.ok {
		t.Fatal("gopher-lua's state no longer has the unexported fields the walk reads; update layout for this release")
	}
}

// walkState is a Lua state with new(id), which makes a userdata whose Go
// value is id, and reached(), which walks the state and returns the ids
// it reached, sorted and joined by commas.
func walkState(t *testing.T) *lua.LState {
	t.Helper()
	L := lua.NewState()
	t.Cleanup(L.Close)
	w := &Walker{}
	var ids []int
	w.Userdata = func(ud *lua.LUserData) bool {
		if id, ok := ud.Value.(int); ok {
			ids = append(ids, id)
		}
		return ud.Value != "not an id" // the library's own (files) are known
	}
	L.SetGlobal("new", L.NewFunction(func(L *lua.LState) int {
		ud := L.NewUserData()
		ud.Value = L.CheckInt(1)
		L.Push(ud)
		return 1
	}))
	L.SetGlobal("reached", L.NewFunction(func(L *lua.LState) int {
		ids = ids[:0]
		if !w.Walk(L) {
			L.Push(lua.LString("incomplete"))
			return 1
		}
		slices.Sort(ids)
		var b strings.Builder
		for i, id := range ids {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprint(&b, id)
		}
		L.Push(lua.LString(b.String()))
		return 1
	}))
	L.SetGlobal("opaque", L.NewFunction(func(L *lua.LState) int {
		ud := L.NewUserData()
		ud.Value = "not an id"
		L.Push(ud)
		return 1
	}))
	return L
}

// Every place a Lua value can live is reached; values nothing refers to
// any more are not.
func TestWalkReachesEveryRoot(t *testing.T) {
	L := walkState(t)
	err := L.DoString(`
		g1 = new(1)                                   -- a global
		local keep = {}
		keep[new(2)] = true                           -- a key
		keep.v = new(3)                               -- a value
		setmetatable(keep, { __index = new(4) })      -- a metatable's field
		local up = new(5)                             -- a local, open upvalue of f
		local function f() return up end
		closed = (function() local c = new(6); return function() return c end end)()
		co = coroutine.create(function(x) local y = new(7); coroutine.yield(); return x, y end)
		coroutine.resume(co, new(8))                  -- a suspended coroutine's stack
		getmetatable("").glua_test = new(9)           -- a built-in type's metatable
		local env = setmetatable({ e = new(10) }, { __index = _G })
		with_env = setfenv(function() return e end, env)
		local u = new(11)
		debug.setmetatable(u, { held = new(12) })     -- a userdata's metatable
		keep.gone = new(13); keep.gone = nil          -- dropped from a table
		local t = { new(14) }; t = nil                -- dropped table
		done = coroutine.create(function() local z = new(15) end)
		coroutine.resume(done); done = nil            -- a finished, dropped coroutine
		cyc = {}; cyc.self = cyc; cyc.x = new(16)     -- a cycle
		local ud = new(17); keep.dropped_then_regained = nil
		result = reached()
		-- the locals stay in use below, so that they are live at the walk
		assert(f() and keep and u and ud)
	`)
	if err != nil {
		t.Fatal(err)
	}
	got := L.GetGlobal("result").String()
	if want := "1,2,3,4,5,6,7,8,9,10,11,12,16,17"; got != want {
		t.Fatalf("reached %s, want %s", got, want)
	}
}

// A local of a running Lua function and the arguments of the Go function
// being called are reached.
func TestWalkReachesTheCallStack(t *testing.T) {
	L := walkState(t)
	err := L.DoString(`
		local function inner(a) local b = new(2); return reached(a, b, new(3)) end
		local function outer() local x = new(1); return inner(new(4)), x end
		result = outer()
	`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := L.GetGlobal("result").String(), "1,2,3,4"; got != want {
		t.Fatalf("reached %s, want %s", got, want)
	}
}

// What the walk cannot see into makes it incomplete rather than wrong.
func TestWalkIsIncompleteWhereItCannotSee(t *testing.T) {
	for name, script := range map[string]string{
		"unknown userdata": `keep = opaque(); result = reached()`,
		"channel":          `keep = channel.make(); result = reached()`,
	} {
		t.Run(name, func(t *testing.T) {
			L := walkState(t)
			lua.OpenChannel(L)
			if err := L.DoString(script); err != nil {
				t.Fatal(err)
			}
			if got := L.GetGlobal("result").String(); got != "incomplete" {
				t.Fatalf("walk gave %q, want incomplete", got)
			}
		})
	}
}

func BenchmarkWalkFreshState(b *testing.B) {
	L := lua.NewState()
	defer L.Close()
	w := &Walker{Userdata: func(*lua.LUserData) bool { return true }}
	for b.Loop() {
		if !w.Walk(L) {
			b.Fatal("incomplete")
		}
	}
}
