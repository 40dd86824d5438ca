package lua51

import (
	"errors"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

var unwindCases = []luaCase{
	{name: "closures made in the unwound frame keep their values", src: `
local fs = {}
local function mk(n)
  local x = n
  fs[#fs+1] = function() return x end
  local y = n * 10
  fs[#fs+1] = function() y = y + 1; return y end
  error("boom " .. n)
end
for i = 1, 3 do print(pcall(mk, i)) end
-- reuse the registers the unwound frames had
local junk = {}
for i = 1, 50 do junk[i] = {i, tostring(i), function() return i end} end
local r = {}
for _, f in ipairs(fs) do r[#r+1] = tostring(f()) end
print(table.concat(r, " "))`,
		want: "false\tstdin:8: boom 1\nfalse\tstdin:8: boom 2\nfalse\tstdin:8: boom 3\n1 11 2 21 3 31"},

	// closure.lua, lines 88-119: error() with no message from inside a loop.
	{name: "closure.lua's closure x error", src: `
local b
function f(x)
  local first = 1
  while 1 do
    if x == 3 and not first then return end
    local a = 'xuxu'
    b = function (op, y)
          if op == 'set' then a = x+y else return a end
        end
    if x == 1 then do break end
    elseif x == 2 then return
    else if x ~= 3 then error() end
    end
    first = nil
  end
end
print(pcall(f, 4))
print(b('get'))
b('set', 10)
print(b('get'))`,
		want: "false\tnil\nxuxu\n14"},

	{name: "a live local stays shared with its closure after a caught error", src: `
local a = 1
local get = function() return a end
print(pcall(error, "x"))
a = 2
print(get())
local function outer()
  local b = 1
  local getb = function() return b end
  local set = function(v) b = v end
  pcall(function() local c = 5; local f = function() return c end; error("in") end)
  b = 7
  print(getb())
  set(9)
  print(b, getb())
end
outer()`,
		want: "false\tx\n2\n7\n9\t9"},

	{name: "an error in an outer pcall after an inner one returned", src: `
local a = 1
local get = function() return a end
print(pcall(function()
  local z = 10
  local gz = function() return z end
  print(pcall(error, "inner"))
  z = 11
  print(gz())
  error("outer")
end))
a = 2
print(get())`,
		want: "false\tinner\n11\nfalse\tstdin:10: outer\n2"},

	{name: "xpcall's handler runs before the closures are closed and after", src: `
local saved
print(xpcall(function()
  local w = "w1"
  saved = function() return w end
  w = "w2"
  error({code = 1})
end, function(e) return type(e) == "table" and e.code end))
print(saved())`,
		want: "false\t1\nw2"},

	{name: "errors inside coroutines", src: `
local saved
local co = coroutine.create(function(v)
  local q = v
  local gq = function() return q end
  local ok, e = pcall(function() local u = 1; saved = function() return u end; error("co err") end)
  q = q + 1
  coroutine.yield(ok, e, gq(), saved())
  error("dead")
end)
print(coroutine.resume(co, 5))
print(coroutine.resume(co))
print(coroutine.status(co))`,
		want: "true\tfalse\tstdin:6: co err\t6\t1\nfalse\tstdin:9: dead\ndead"},
	{name: "resuming a coroutine that is not suspended", src: `
local outer
outer = coroutine.create(function()
  local inner = coroutine.create(function() return coroutine.resume(outer) end)
  print(coroutine.resume(inner))
  print(coroutine.resume(coroutine.running()))
end)
coroutine.resume(outer)
print(coroutine.resume(outer))`,
		want: "true\tfalse\tcannot resume normal coroutine\nfalse\tcannot resume running coroutine\n" +
			"false\tcannot resume dead coroutine"},

	{name: "deep recursion caught by pcall", src: `
local function rec() rec() end
local ok, msg = pcall(rec)
print(ok, string.find(msg, "stack overflow", 1, true) ~= nil)
local function rec2(n)
  local v = n
  local f = function() return v end
  if n == 0 then error("bottom") end
  return rec2(n - 1)
end
print(pcall(rec2, 100))`,
		want: "false\ttrue\nfalse\tstdin:8: bottom"},
}

func TestPcallClosesUpvaluesOfUnwoundFrames(t *testing.T) {
	checkCases(t, unwindCases)
}

var pcallCases = []luaCase{
	{name: "results", src: `print(pcall(function(...) return ... end, 1, nil, 3))`,
		want: "true\t1\tnil\t3"},
	{name: "error values that are tables or nil", src: `
local t = {}
local ok, e = pcall(error, t)
print(ok, e == t)
print(pcall(error, nil))
print(select("#", pcall(error)))`,
		want: "false\ttrue\nfalse\tnil\n2"},
	{name: "values that cannot be called", src: `
print(pcall(nil))
print(pcall(42))
print(pcall({}))
print(pcall(setmetatable({}, {__call = function(self, x) return x end}), 7))`,
		want: "false\tattempt to call a nil value\nfalse\tattempt to call a number value\n" +
			"false\tattempt to call a table value\ntrue\t7"},
	{name: "xpcall passes no arguments", src: `
print(xpcall(function(...) return select("#", ...) end, print, 1, 2))`,
		want: "true\t0"},
	{name: "xpcall's handler result replaces the error", src: `
print(xpcall(function() error("a") end, function(m) return "H:" .. m, 2 end))
print(xpcall(error, function() end))`,
		want: "false\tH:stdin:2: a\nfalse\tnil"},
	{name: "xpcall of a value that cannot be called goes through the handler", src: `
print(xpcall(nil, function(m) return "H:" .. m end))`,
		want: "false\tH:attempt to call a nil value"},
	{name: "xpcall with a handler that is not a function", src: `
print(xpcall(function() return 1 end, 42))
print(xpcall(function() error("q") end, 42))`,
		want: "true\t1\nfalse\terror in error handling"},
	{name: "an error in the handler calls the handler again", src: `
local n = 0
print(xpcall(function() error("a") end, function(m)
  n = n + 1
  if n < 3 then error("again " .. n, 0) end
  return m .. " after " .. n
end))
print(xpcall(function() error("a") end, function(m) error("b") end))
print(xpcall(error, error))`,
		want: "false\tagain 2 after 3\nfalse\terror in error handling\nfalse\terror in error handling"},
	{name: "the handler sees the stack where the error was raised", src: `
local function lvl3() error("deep") end
local function lvl2() lvl3() end
print(xpcall(lvl2, function(m)
  local info = debug.getinfo(3, "l")
  return m .. " / caller line " .. info.currentline
end))`,
		want: "false\tstdin:2: deep / caller line 2"},
	{name: "yield inside pcall fails inside the pcall", src: `
local co = coroutine.create(function()
  print(pcall(coroutine.yield, 1))
  return "done"
end)
print(coroutine.resume(co))
print(pcall(coroutine.yield))`,
		want: "false\tattempt to yield across metamethod/C-call boundary\ntrue\tdone\n" +
			"false\tattempt to yield across metamethod/C-call boundary"},
}

func TestPcallAndXpcallBehaveAsInLua51(t *testing.T) {
	checkCases(t, pcallCases)
}

// gopher-lua's traceback names Go functions [G] where Lua's names C ones
// [C]; otherwise a handler's traceback is Lua 5.1's.
func TestHandlerTracebackStartsWhereTheErrorWasRaised(t *testing.T) {
	src := `
local function lvl3() error("deep") end
local function lvl2() lvl3() end
print(xpcall(lvl2, debug.traceback))`
	want := "false\tstdin:2: deep\nstack traceback:\n" +
		"\t[C]: in function 'error'\n\tstdin:2: in function 'lvl3'\n\tstdin:3: in function <stdin:3>\n" +
		"\t[C]: in function 'xpcall'\n\tstdin:4: in main chunk\n\t[C]: ?"
	got := strings.ReplaceAll(runGlua(t, src), "[G]", "[C]")
	if got != want {
		t.Errorf("printed\n%s\nwant\n%s", got, want)
	}
	t.Run("lua5.1 agrees", func(t *testing.T) {
		if l := runLua51(t, src); l != want {
			t.Errorf("lua5.1 printed\n%s\nthe test expects\n%s", l, want)
		}
	})
}

// A host calling PCall without a handler gets the error L.PCall would
// give it, traceback included.
func TestPCallWithoutHandlerGivesWhatLPCallGives(t *testing.T) {
	src := `
local function inner() error("boom") end
local function outer() inner() end
outer()`
	errorOf := func(pcall func(L *lua.LState) error) *lua.ApiError {
		L := lua.NewState()
		defer L.Close()
		Open(L)
		fn, err := L.Load(strings.NewReader(src), "chunk")
		if err != nil {
			t.Fatal(err)
		}
		L.Push(fn)
		var apiErr *lua.ApiError
		if !errors.As(pcall(L), &apiErr) {
			t.Fatal("no *lua.ApiError")
		}
		if L.GetTop() != 0 {
			t.Errorf("stack left with %d values", L.GetTop())
		}
		return apiErr
	}
	want := errorOf(func(L *lua.LState) error { return L.PCall(0, 0, nil) })
	got := errorOf(func(L *lua.LState) error { return PCall(L, 0, 0, nil) })
	if got.Type != want.Type || got.Object != want.Object || got.StackTrace != want.StackTrace {
		t.Errorf("PCall gave\n%v %q\n%s\nL.PCall gives\n%v %q\n%s",
			got.Type, got.Object, got.StackTrace, want.Type, want.Object, want.StackTrace)
	}
	if got.Error() != want.Error() {
		t.Errorf("Error() is %q, L.PCall's is %q", got.Error(), want.Error())
	}
}

func TestPCallWithHandlerReturnsTheHandlersResult(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	Open(L)
	if err := L.DoString(`function fail() local t = nil; return t.x end`); err != nil {
		t.Fatal(err)
	}
	handler := L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString("handled: " + L.ToString(1)))
		return 1
	})
	L.Push(L.GetGlobal("fail"))
	err := PCall(L, 0, 0, handler)
	var apiErr *lua.ApiError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v is not a *lua.ApiError", err)
	}
	if apiErr.Type != lua.ApiErrorError || !strings.HasPrefix(apiErr.Object.String(), "handled: <string>:1: ") {
		t.Errorf("got %v %q", apiErr.Type, apiErr.Object)
	}
	if L.GetTop() != 0 {
		t.Errorf("stack left with %d values", L.GetTop())
	}

	// And on success, the results, as L.PCall leaves them.
	L.Push(L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(1))
		L.Push(lua.LNumber(2))
		return 2
	}))
	if err := PCall(L, 0, lua.MultRet, handler); err != nil {
		t.Fatal(err)
	}
	if L.GetTop() != 2 || L.Get(1) != lua.LNumber(1) || L.Get(2) != lua.LNumber(2) {
		t.Errorf("stack holds %d values: %v %v", L.GetTop(), L.Get(1), L.Get(2))
	}
}

// A stack overflow leaves room to call the message handler, and the
// closures of the unwound frames keep their values, as in Lua 5.1, with
// either kind of call stack. (With MinimizeStackMemory gopher-lua's stack
// overflows with a Go panic that leaves no room; the call instruction
// raises the overflow before that, depth.go.)
func TestClosuresSurviveStackOverflow(t *testing.T) {
	src := `
local fs = {}
local function rec(n)
  local v = n
  fs[#fs+1] = function() return v end
  rec(n + 1)
end
print((pcall(rec, 1)))
local junk = {}
for i = 1, 100 do junk[i] = {i} end
local same, nils = 0, 0
for i, f in ipairs(fs) do
  local v = f()
  if v == i then same = same + 1 elseif v == nil then nils = nils + 1 end
end
print(#fs > 100, same == #fs, nils == #fs)`
	for _, tc := range []struct {
		name string
		opts lua.Options
		want string
	}{
		{"fixed stack", lua.Options{CallStackSize: 300}, "false\ntrue\ttrue\tfalse"},
		{"growing stack", lua.Options{CallStackSize: 300, MinimizeStackMemory: true}, "false\ntrue\ttrue\tfalse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			L := lua.NewState(tc.opts)
			defer L.Close()
			Open(L)
			got := runIn(t, L, src, func(L *lua.LState) error { return PCall(L, 0, 0, nil) })
			if got != tc.want {
				t.Errorf("printed\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func benchmarkScript(b *testing.B, open bool, src string) {
	L := lua.NewState()
	defer L.Close()
	if open {
		Open(L)
	}
	fn, err := L.LoadString(src)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		L.Push(fn)
		if err := L.PCall(0, 0, nil); err != nil {
			b.Fatal(err)
		}
	}
}

const pcallLoop = `local f = function(x) return x end for i = 1, 1000 do pcall(f, i) end`
const pcallErrorLoop = `for i = 1, 1000 do pcall(error, "x") end`

// A thousand successful pcalls, glua's against gopher-lua's.
func BenchmarkPcall(b *testing.B)               { benchmarkScript(b, true, pcallLoop) }
func BenchmarkGopherLuaPcall(b *testing.B)      { benchmarkScript(b, false, pcallLoop) }
func BenchmarkPcallError(b *testing.B)          { benchmarkScript(b, true, pcallErrorLoop) }
func BenchmarkGopherLuaPcallError(b *testing.B) { benchmarkScript(b, false, pcallErrorLoop) }
