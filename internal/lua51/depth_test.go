package lua51

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// runGrowing runs src as runGlua does, in a state whose call stack grows
// up to depth frames and whose value stack grows too, as glua's do ([lua]
// call_depth and stack_slots).
func runGrowing(depth int) func(t *testing.T, src string) string {
	return func(t *testing.T, src string) string {
		t.Helper()
		L := lua.NewState(lua.Options{
			CallStackSize: depth, MinimizeStackMemory: true,
			RegistrySize: 5120, RegistryMaxSize: 1 << 22, RegistryGrowStep: 1 << 16,
		})
		t.Cleanup(L.Close)
		Open(L)
		return runIn(t, L, src, func(L *lua.LState) error { return PCall(L, 0, lua.MultRet, nil) })
	}
}

// The scripts print only what does not depend on the depth at which the
// stack overflows (lua5.1's is about 16,000 calls) or on glua's words
// after "stack overflow".
var overflowCases = []luaCase{
	{"the overflow carries the calling function's position", `function y() y() end
local ok, m = pcall(y)
print(ok, m:match("^stdin:1: stack overflow"))`, "false\tstdin:1: stack overflow"},
	{"an xpcall handler is called for it", `local function y() return 1 + y() end
print(xpcall(y, function(m) return "handled " .. m:match("^(.-overflow)") end))`, "false\thandled stdin:1: stack overflow"},
	{"the handler may call Lua functions", `local function y() y() end
local function id(x) return x end
print(xpcall(y, function(m) return id(id("h")) end))`, "false\th"},
	{"a handler that overflows again is an error in error handling", `local function y() y() end
local function r() return r() + 1 end
print(xpcall(y, function(m) return r() end))`, "false\terror in error handling"},
	{"debug.traceback as the handler sees the whole stack", `local function y() y() end
local function g() y() end
local _, tb = xpcall(g, debug.traceback)
local lines, ys = 0, 0
for line in tb:gmatch("[^\n]+") do
  lines = lines + 1
  if line:find("in function 'y'", 1, true) then ys = ys + 1 end
end
print(lines, ys, tb:match("\n\t%.%.%.\n") ~= nil, tb:match("stdin:2: in function <stdin:2>\n") ~= nil)`, "24\t17\ttrue\ttrue"},
	{"the state works after the overflow", `local function y() y() end
for i = 1, 3 do assert(not pcall(y)) end
local function d(n) if n == 0 then return 0 end return 1 + d(n - 1) end
print(d(5000))`, "5000"},
	{"under a hook at every instruction, whose own call meets the bound", `local n = 0
debug.sethook(function() n = n + 1 end, "", 1)
local function y() y() end
local ok, m = pcall(y)
debug.sethook()
print(ok, m:match("^stdin:3: stack overflow"), n > 0)`, "false\tstdin:3: stack overflow\ttrue"},
	{"in a coroutine too", `local function y() y() end
print(coroutine.wrap(function() return select(2, pcall(y)):match("^stdin:%d+: stack overflow") end)())`, "stdin:1: stack overflow"},
}

func TestStackOverflowIsLua51s(t *testing.T) {
	checkCasesWith(t, overflowCases, runGrowing(20000))
}

// The bound is [lua] call_depth: calls nest up to it and not past it. The
// main chunk and pcall are two of the 1,000 frames.
func TestCallDepthBoundsNesting(t *testing.T) {
	src := `local n = 0
local function y() n = n + 1; y() end
print(pcall(y))
print(n)`
	want := "false\tstdin:2: stack overflow (calls nested deeper than [lua] call_depth allows)\n998"
	if got := runGrowing(1000)(t, src); got != want {
		t.Errorf("printed\n%s\nwant\n%s", got, want)
	}
}
