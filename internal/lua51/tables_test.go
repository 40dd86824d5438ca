package lua51

import (
	"context"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

func TestConcatFollowsLua51(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "defaults", src: `print(table.concat{}, table.concat({}, "x"), table.concat({"a", "b", "c"}))`,
			want: "\t\tabc"},
		{name: "ranges", src: `
local a = {"a", "b", "c"}
print(table.concat(a, ",", 1, 0), table.concat(a, ",", 1, 1), table.concat(a, ",", 1, 2),
      table.concat(a, ",", 2), table.concat(a, ",", 3, 3), table.concat(a, ",", 4, 3))`,
			want: "\ta\ta,b\tb,c\tc\t"},
		{name: "embedded zeros", src: `print(table.concat({'\0', '\0\1', '\0\1\2'}, '.\0.') == "\0.\0.\0\1.\0.\0\1\2")`,
			want: "true"},
		{name: "numbers are written as %.14g", src: `print(table.concat({1, 2.5, 1/3, 1e15, 2^53, -0.1}, " "))`,
			want: "1 2.5 0.33333333333333 1e+15 9.007199254741e+15 -0.1"},
		{name: "a number separator", src: `print(table.concat({"a", "b"}, 0.5))`, want: "a0.5b"},
		{name: "a range past the end fails", src: `print(pcall(table.concat, {"a", "b"}, ",", 1, 5))`,
			want: "false\tinvalid value (nil) at index 3 in table for 'concat'"},
		{name: "index 0 fails", src: `print(pcall(table.concat, {"a"}, ",", 0))`,
			want: "false\tinvalid value (nil) at index 0 in table for 'concat'"},
		{name: "a bad element fails with its index",
			src:  "local ok, e = pcall(function() return table.concat({1, 2, {}}) end)\nprint(e)",
			want: "stdin:1: invalid value (table) at index 3 in table for 'concat'"},
		{name: "a hole fails", src: `print(pcall(table.concat, {"a", nil, "c"}, "", 1, 3))`,
			want: "false\tinvalid value (nil) at index 2 in table for 'concat'"},
		{name: "the range may be numeric strings", src: `print(table.concat({"a", "b", "c"}, "", "2", "3"))`,
			want: "bc"},
		{name: "the table is checked after the separator",
			src:  `print((pcall(table.concat, {}, {}))) print((pcall(table.concat, nil)))`,
			want: "false\nfalse"},
	})
}

func TestConcatOfAMillionStrings(t *testing.T) {
	L := newState(t)
	start := time.Now()
	got := runIn(t, L, `
local t = {}
for i = 1, 1000000 do t[i] = "ab" end
local s = table.concat(t, ",")
print(#s, s:sub(1, 8))`, func(L *lua.LState) error { return PCall(L, 0, 0, nil) })
	if want := "2999999\tab,ab,ab"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}

// With gopher-lua's default registry (5,120 slots, fixed), its
// table.concat cannot join more than about 2,500 elements.
func TestConcatNeedsNoRegistry(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	Open(L)
	got := runIn(t, L, `
local t = {}
for i = 1, 300000 do t[i] = "a" end
print(#table.concat(t))`, func(L *lua.LState) error { return PCall(L, 0, 0, nil) })
	if got != "300000" {
		t.Errorf("printed %q", got)
	}
}

func TestForeachAndForeachiStopAtTheFirstResult(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "foreachi visits 1..#t in order", src: `
local seen = {}
print(table.foreachi({"a", "b", "c"}, function(i, v) seen[#seen+1] = i .. "=" .. v end))
print(table.concat(seen, " "))`,
			want: "\n1=a 2=b 3=c"},
		{name: "foreachi returns the first non-nil result",
			src:  `print(table.foreachi({10, 20, 30}, function(i, v) if v >= 20 then return i, v end end))`,
			want: "2"},
		{name: "foreachi takes #t once",
			src:  `local t = {1, 2} print(table.foreachi(t, function(i, v) t[#t+1] = v end), #t)`,
			want: "nil\t4"},
		{name: "foreach visits every pair", src: `
local sum, keys = 0, 0
table.foreach({1, 2, x = 3, y = 4}, function(k, v) sum = sum + v; keys = keys + 1 end)
print(sum, keys)`,
			want: "10\t4"},
		{name: "foreach returns the first non-nil result",
			src:  `print(table.foreach({x = 1}, function(k, v) return k, v end))`,
			want: "x"},
		{name: "foreach wants a function", src: `print((pcall(table.foreach, {}, 1)))`,
			want: "false"},
	})
}

func TestSetnIsObsolete(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "setn", src: `print(pcall(table.setn, {}, 1))`, want: "false\t'setn' is obsolete"},
		{name: "setn from Lua", src: "local ok, e = pcall(function()\n table.setn({}, 1)\nend)\nprint(e)",
			want: "stdin:2: 'setn' is obsolete"},
	})
}

func TestMaxnCountsEveryNumericKey(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "maxn", src: `
print(table.maxn{}, table.maxn{1, 2, 3}, table.maxn{["1000"] = true}, table.maxn{[1000] = true},
      table.maxn{["1000"] = true, [24.5] = 3}, table.maxn{[-5] = 1}, table.maxn{1, nil, 3})`,
			want: "0\t3\t0\t1000\t24.5\t0\t3"},
	})
}

// TestConcatStopsWhenTheContextIsDone: table.concat over a big table looks
// at the context as it goes, as the VM does between instructions.
func TestConcatStopsWhenTheContextIsDone(t *testing.T) {
	L := newState(t)
	big := L.NewTable()
	for i := 1; i <= 3*checkEvery; i++ {
		big.Append(lua.LString("x"))
	}
	concat := L.GetField(L.GetGlobal("table"), "concat")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	L.SetContext(ctx)
	err := L.CallByParam(lua.P{Fn: concat, NRet: 1, Protect: true}, big)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("concat under a cancelled context: %v", err)
	}
	L.RemoveContext()
	if err := L.CallByParam(lua.P{Fn: concat, NRet: 1, Protect: true}, big); err != nil || len(L.Get(-1).String()) != 3*checkEvery {
		t.Fatalf("concat: %v", err)
	}
}

// table.sort is lua5.1's quicksort: records with equal keys end in
// lua5.1's order, which a script that prints them shows.
func TestSortLeavesTiesInLua51sOrder(t *testing.T) {
	src := `local x = 12345
local function rand(n) x = x * 48271 % 2147483647 return x % n end
for _, n in ipairs({2, 3, 10, 100, 1000}) do
  local t = {}
  for i = 1, n do t[i] = {k = rand(7), i = i} end
  table.sort(t, function(a, b) return a.k < b.k end)
  local out = {}
  for i = 1, n do out[i] = t[i].i end
  print(table.concat(out, " "))
  local s = {}
  for i = 1, n do s[i] = rand(n) end
  table.sort(s)
  print(table.concat(s, " "))
end`
	if got, want := runGlua(t, src), runLua51(t, src); got != want {
		t.Errorf("glua:\n%s\nlua5.1:\n%s", got, want)
	}
	checkCases(t, []luaCase{
		{name: "an invalid order function", src: `print(pcall(table.sort, {5, 3, 8, 1, 9, 2}, function(a, b) return true end))`,
			want: "false\tinvalid order function for sorting"},
		{name: "values that do not compare", src: `print(pcall(table.sort, {3, 1, "x"})) print(pcall(table.sort, {{}, {}}))`,
			want: "false\tattempt to compare string with number\nfalse\tattempt to compare two table values"},
		{name: "__lt", src: `local mt = {__lt = function(a, b) return a.v < b.v end}
local t = {} for i, v in ipairs({3, 1, 2}) do t[i] = setmetatable({v = v}, mt) end
table.sort(t) print(t[1].v, t[2].v, t[3].v)`,
			want: "1\t2\t3"},
	})
}
