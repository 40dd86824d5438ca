package runtime

import (
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/config"
)

// TestFramesSiteAgreesWithGetStack calls a Go function from Lua in every
// way a script allocates (main chunk, nested functions, methods, pcall,
// loops, callbacks from Go, tail calls) and checks that reading the frames
// directly finds the same line as GetStack, or defers to it.
func TestFramesSiteAgreesWithGetStack(t *testing.T) {
	if !frameFields.ok {
		t.Fatal("gopher-lua's call frames no longer have the fields callerSite reads; it falls back to GetStack, which is slower")
	}
	c := config.Default()
	rt, err := New(Options{Config: &c, Backend: "cpu", CPUMemory: "64MiB"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	L := rt.Lua()
	calls, fast := 0, 0
	L.SetGlobal("probe", L.NewFunction(func(L *lua.LState) int {
		calls++
		want := stackSite(rt.L)
		got, ok := framesSite(rt.L)
		if ok {
			fast++
			if got != want {
				t.Errorf("call %d: frames say %v, GetStack %v", calls, got, want)
			}
		}
		if want.line <= 0 && want.source != "" {
			t.Errorf("call %d: GetStack found no line: %v", calls, want)
		}
		return 0
	}))
	L.SetGlobal("callback", L.NewFunction(func(L *lua.LState) int {
		L.Call(0, 0) // runs probe with a Go function between it and Lua
		return 0
	}))
	L.SetGlobal("gocall", L.NewFunction(func(L *lua.LState) int {
		fn := L.CheckFunction(1)
		L.Push(fn)
		L.Call(0, 0)
		return 0
	}))
	script := `
probe()
local function f() probe() end
f()
local t = {}
function t:m() probe() end
t:m()
pcall(probe)
pcall(function() probe() end)
for i = 1, 3 do probe() end
gocall(probe)
gocall(function() probe() end)
local function tail() return probe() end
tail()
local function outer() return f() end
outer()
local co = coroutine.wrap(function() probe() end)
co()
`
	if err := rt.DoString(script); err != nil {
		t.Fatal(err)
	}
	if calls != 13 || fast < 10 {
		t.Fatalf("%d probes, %d read from the frames", calls, fast)
	}
}
