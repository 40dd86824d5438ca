package lua51

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// If this fails, gopher-lua's unexported fields have changed: PCall now
// falls back to L.PCall and upvalues are closed as gopher-lua closes them.
// Update layout.go for the new release, or drop PCall if the release
// closes upvalues as Lua 5.1 does (TestPlainGopherLuaShowsEachDefect).
func TestGopherLuaLayoutIsKnown(t *testing.T) {
	if !layout.ok || !layout.debugOK {
		t.Fatal("gopher-lua's LState, Upvalue, callFrame or Debug fields are not what layout.go expects")
	}
}

func TestOpenOnABareStateIsHarmless(t *testing.T) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	Open(L)
	Open(nil)
	if n := countGlobals(L); n != 0 {
		t.Errorf("Open put %d globals into a state without libraries", n)
	}
	// With only the base library: its replacements and gcinfo, no table or
	// math functions.
	lua.OpenBase(L)
	Open(L)
	for _, name := range []string{"pcall", "xpcall", "error", "tonumber", "collectgarbage", "gcinfo"} {
		fn, ok := L.GetGlobal(name).(*lua.LFunction)
		if !ok {
			t.Errorf("%s is %v", name, L.GetGlobal(name))
			continue
		}
		if p, _ := goFunc(fn); builtins()[p] != "" {
			t.Errorf("%s is still gopher-lua's", name)
		}
	}
	if err := L.DoString(`assert(select(2, pcall(error)) == nil)`); err != nil {
		t.Error(err)
	}
}

func countGlobals(L *lua.LState) int {
	n := 0
	L.G.Global.ForEach(func(lua.LValue, lua.LValue) { n++ })
	return n
}

func TestOpenTwiceIsHarmless(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	Open(L)
	before := map[string]lua.LValue{}
	for _, name := range []string{"pcall", "error", "gcinfo"} {
		before[name] = L.GetGlobal(name)
	}
	foreach := L.GetField(L.GetGlobal("table"), "foreach")
	Open(L)
	for name, v := range before {
		if L.GetGlobal(name) != v {
			t.Errorf("the second Open replaced %s", name)
		}
	}
	if L.GetField(L.GetGlobal("table"), "foreach") != foreach {
		t.Error("the second Open replaced table.foreach")
	}
	got := runIn(t, L, `print(pcall(error), math.huge == 1/0, table.concat({1, 2}, ","))`,
		func(L *lua.LState) error { return PCall(L, 0, 0, nil) })
	if got != "false\ttrue\t1,2" {
		t.Errorf("printed %q", got)
	}
}

// A sandbox that wrapped or removed a function keeps its choice.
func TestOpenLeavesAHostsOwnFunctions(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	mine := L.NewFunction(func(L *lua.LState) int { L.Push(lua.LString("mine")); return 1 })
	L.SetGlobal("pcall", mine)
	L.SetField(L.GetGlobal("table"), "foreach", mine)
	L.SetGlobal("collectgarbage", lua.LNil)
	L.SetField(L.GetGlobal("math"), "huge", lua.LNumber(1e300))
	Open(L)
	if L.GetGlobal("pcall") != mine || L.GetField(L.GetGlobal("table"), "foreach") != mine {
		t.Error("Open replaced the host's functions")
	}
	if L.GetGlobal("collectgarbage") != lua.LNil || L.GetGlobal("gcinfo") != lua.LNil {
		t.Error("Open added collectgarbage or gcinfo where the host removed collectgarbage")
	}
	if L.GetField(L.GetGlobal("math"), "huge") != lua.LNumber(1e300) {
		t.Error("Open changed the host's math.huge")
	}
}

// Every state gets its own collectgarbage settings.
func TestStatesDoNotShareState(t *testing.T) {
	a, b := lua.NewState(), lua.NewState()
	defer a.Close()
	defer b.Close()
	Open(a)
	Open(b)
	if err := a.DoString(`collectgarbage("setpause", 123)`); err != nil {
		t.Fatal(err)
	}
	if err := b.DoString(`assert(collectgarbage("setpause", 200) == 200)`); err != nil {
		t.Error(err)
	}
}
