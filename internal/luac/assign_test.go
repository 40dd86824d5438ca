package luac

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/luatest"
)

// assignCase is a Lua snippet and what Lua 5.1 prints for it.
type assignCase struct {
	name string
	src  string
	want string
	// gopherRight marks snippets plain gopher-lua already gets right, kept
	// beside the wrong ones to guard that glua's compiler keeps them right.
	gopherRight bool
}

var assignCases = []assignCase{
	{name: "swap locals", src: `local a, b = 1, 2; a, b = b, a; print(a, b)`, want: "2\t1"},
	{name: "swap globals", src: `a, b = 1, 2; a, b = b, a; print(a, b)`, want: "2\t1"},
	{name: "right side reads an earlier target", src: `local x, y = 0, 0; x, y = x + 1, x + y; print(x, y)`, want: "1\t0"},
	{name: "rotate three locals", src: `local a, b, c = 1, 2, 3; a, b, c = c, a, b; print(a, b, c)`, want: "3\t1\t2"},
	{name: "swap upvalues", src: `
		local a, b = 1, 2
		local function f() a, b = b, a end
		f()
		print(a, b)`, want: "2\t1"},
	{name: "local global and upvalue in one statement", src: `
		g = 10
		local l = 20
		local function f()
			local m = 30
			l, g, m = m, l, g
			return m
		end
		local m = f()
		print(l, g, m)`, want: "30\t20\t10"},
	{name: "swap table elements", src: `local t = {1, 2}; t[1], t[2] = t[2], t[1]; print(t[1], t[2])`, want: "2\t1"},
	{name: "swap table fields", src: `local p = {x = 1, y = 2}; p.x, p.y = p.y, p.x; print(p.x, p.y)`, want: "2\t1"},
	{name: "index key uses the old value", src: `local t = {}; local i = 1; t[i], i = 20, 30; print(t[1], t[30], i)`, want: "20\tnil\t30"},
	{name: "index key after its variable in the list", src: `local t = {}; local i = 1; i, t[i] = 30, 20; print(t[1], t[30], i)`, want: "20\tnil\t30"},
	{name: "string key uses the old value", src: `local t = {}; local k = "a"; t[k], k = 1, "b"; print(t.a, t.b, k)`, want: "1\tnil\tb"},
	{name: "table prefix assigned later in the list", src: `local t = {}; local u = t; t.x, t = 5, {}; print(u.x, t.x)`, want: "5\tnil"},
	{name: "table prefix assigned earlier in the list", src: `local t = {}; local u = t; t, t.x = {}, 5; print(u.x, t.x)`, want: "5\tnil"},
	{name: "nested prefix uses the old table", src: `local t = {u = {}}; local v = t.u; t.u.x, t.u = 1, {}; print(v.x, t.u.x)`, want: "1\tnil"},
	{name: "call expands into all targets", src: `
		local function f() return 1, 2, 3 end
		local a, b, c = 0, 0, 0
		a, b, c = f()
		print(a, b, c)`, want: "1\t2\t3"},
	{name: "call not last gives one value", src: `
		local function f() return 1, 2, 3 end
		local a, b, c = 0, 0, 0
		a, b, c = f(), 10
		print(a, b, c)`, want: "1\t10\tnil"},
	{name: "parenthesised call gives one value", src: `
		local function f() return 1, 2, 3 end
		local a, b = 0, 0
		a, b = (f())
		print(a, b)`, want: "1\tnil"},
	{name: "method call expands", src: `
		local o = {v = 3}
		function o:get() return self.v, self.v * 2 end
		local a, b
		a, b = o:get()
		print(a, b)`, want: "3\t6"},
	{name: "fewer values leave nil", src: `local a, b, c = 1, 2, 3; a, b, c = 9; print(a, b, c)`, want: "9\tnil\tnil"},
	{name: "extra values are evaluated and dropped", src: `
		local n = 0
		local function inc() n = n + 1; return n end
		local a, b = 0, 0
		a, b = inc(), inc(), inc()
		print(a, b, n)`, want: "1\t2\t3"},
	{name: "varargs fill the targets", src: `
		local function f(...) local a, b, c = 0, 0, 0; a, b, c = ...; return a, b, c end
		print(f(1, 2))`, want: "1\t2\tnil"},
	{name: "varargs after a swap", src: `
		local function f(...) local a, b, c = 5, 6, 0; a, b, c = b, ...; return a, b, c end
		print(f(7, 8))`, want: "6\t7\t8"},
	{name: "function literal in an expression", src: `
		local r = (function() local a, b = 1, 2; a, b = b, a; return a .. b end)()
		print(r)`, want: "21"},
	{name: "function in a table constructor", src: `
		local t = {f = function(x, y) x, y = y, x; return x, y end}
		print(t.f(1, 2))`, want: "2\t1"},
	{name: "function defined with a dotted name", src: `
		local M = {}
		function M.swap(a, b) a, b = b, a; return a, b end
		print(M.swap("x", "y"))`, want: "y\tx"},
	{name: "function literal on the right of a multiple assignment", src: `
		local a, b = 1, 2
		local f
		f, a = function(x, y) x, y = y, x; return x .. y end, b
		print(f(a, b), a, b)`, want: "22\t2\t2"},
	{name: "function argument", src: `print((function(...) local a, b = ...; a, b = b, a; return a, b end)(1, 2))`, want: "2\t1"},
	{name: "fibonacci in a numeric for", src: `local a, b = 0, 1; for i = 1, 10 do a, b = b, a + b end; print(a, b)`, want: "55\t89"},
	{name: "gcd in a while loop", src: `local a, b = 48, 18; while b ~= 0 do a, b = b, a % b end; print(a)`, want: "6"},
	{name: "repeat loop", src: `local i, s = 0, 0; repeat i, s = i + 1, s + i until i == 5; print(i, s)`, want: "5\t10"},
	{name: "generic for swapping key and value", src: `
		local t = {}
		for k, v in pairs({a = 1}) do k, v = v, k; t[k] = v end
		print(t[1])`, want: "a"},
	{name: "closures made in a loop", src: `
		local fs = {}
		for i = 1, 3 do
			local a, b = i, -i
			fs[i] = function() a, b = b, a; return a, b end
		end
		print(fs[1](), fs[3]())`, want: "-1\t-3\t3"},
	{name: "if and else branches", src: `
		local a, b = 1, 2
		if a > b then a, b = b, a else b, a = a, b end
		print(a, b)`, want: "2\t1"},
	{name: "left then right evaluation order", src: `
		local log = {}
		local function k(n) log[#log + 1] = n; return n end
		local t = {}
		t[k(1)], t[k(2)] = k(3), k(4)
		print(table.concat(log, " "), t[1], t[2])`, want: "1 2 3 4\t3\t4"},
	{name: "stores happen right to left", src: `
		local log = {}
		local t = setmetatable({}, {__newindex = function(_, k, v) log[#log + 1] = k .. "=" .. v end})
		t.a, t.b = 1, 2
		print(table.concat(log, " "))`, want: "b=2 a=1"},
	{name: "same local twice keeps the first value", src: `local a; a, a = 1, 2; print(a)`, want: "1"},
	{name: "same global twice keeps the first value", src: `x, x = 1, 2; print(x)`, want: "1"},
	{name: "same field twice keeps the first value", src: `local t = {}; t.k, t.k = 1, 2; print(t.k)`, want: "1"},
	{name: "ten locals reversed", src: `
		local a, b, c, d, e, f, g, h, i, j = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
		a, b, c, d, e, f, g, h, i, j = j, i, h, g, f, e, d, c, b, a
		print(a, b, c, d, e, f, g, h, i, j)`, want: "10\t9\t8\t7\t6\t5\t4\t3\t2\t1"},
	{name: "single assignment is untouched", src: `local a = 1; a = a + 1; print(a)`, want: "2"},
}

// runCaptured runs fn in L and returns what it printed, one line per print.
func runCaptured(t *testing.T, L *lua.LState, fn *lua.LFunction) string {
	t.Helper()
	out := luatest.CapturePrint(L)
	L.Push(fn)
	if err := L.PCall(0, lua.MultRet, nil); err != nil {
		t.Fatalf("run: %v", err)
	}
	return strings.TrimSuffix(out.String(), "\n")
}

func TestSnippetsPrintTheirRecordedLua51Output(t *testing.T) {
	for _, tc := range snippetCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := runLuac(t, tc.src); got != tc.want {
				t.Errorf("printed %q, Lua 5.1 prints %q", got, tc.want)
			}
		})
	}
}

// The cases above must be able to fail: gopher-lua's own compiler gets some
// of them wrong. If this test fails, upstream has fixed the miscompile.
func TestPlainGopherLuaMiscompilesTheSwaps(t *testing.T) {
	wrong := 0
	for _, tc := range assignCases {
		L := lua.NewState()
		fn, err := L.LoadString(tc.src)
		if err != nil {
			L.Close()
			t.Fatalf("%s: %v", tc.name, err)
		}
		if runCaptured(t, L, fn) != tc.want {
			wrong++
		}
		L.Close()
	}
	if wrong == 0 {
		t.Fatal("gopher-lua now compiles every multiple assignment correctly; these cases no longer show a defect of its compiler")
	}
	t.Logf("plain gopher-lua gets %d of %d snippets wrong", wrong, len(assignCases))
}
