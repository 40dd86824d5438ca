package luac

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// compilerCases are single assignments and generic for loops that
// gopher-lua v1.1.2 compiles wrongly, each with what Lua 5.1 prints.
var compilerCases = []assignCase{
	// Constants fold with the VM's arithmetic, as Lua 5.1 folds them.
	{name: "% and ^ of constants fold as Lua 5.1 folds them", src: `print(2^900 % 3 == 0, 0.1 % 0.01 == 0, 2^255 % 10 == 0, 5 % 0 ~= 5 % 0)`, want: "true\ttrue\ttrue\ttrue"},
	// `local f = function` is a plain local: the body sees the f outside.
	{name: "local f = function sees the outer f", src: `f = "outer"; local f = function() return f end; print(f())`, want: "outer"},
	// `and`/`or` into an existing local whose deciding operand is not a local.
	{name: "and with a false field into a local", src: `local t = {k = false}; local w = "old"; w = t.k and 1; print(w)`, want: "false"},
	{name: "and with a nil global into a local", src: `local w = "old"; w = g and 1; print(w)`, want: "nil"},
	{name: "and with a false upvalue into a local", src: `
		local up = false
		local function f() local w = "old"; w = up and 1; return w end
		print(f())`, want: "false"},
	{name: "and with a call into a local", src: `local function f() end; local w = "old"; w = f() and 1; print(w)`, want: "nil"},
	{name: "and with a false field into a parameter", src: `
		local function f(w, t) w = t.k and 1; return w end
		print(f("old", {k = false}))`, want: "false"},
	{name: "and into a method's self", src: `
		local o = {k = false}
		function o:m() self = self.k and 1; return self end
		print(o:m())`, want: "false"},
	{name: "and into a loop variable", src: `
		local t = {k = false}
		for i = 1, 1 do i = t.k and 1; print(i) end
		for _, v in ipairs({1}) do v = t.k and 1; print(v) end`, want: "false\nfalse"},
	{name: "or with a false field and a nil call into a local", src: `
		local t = {k = false}; local function f() end
		local w = "old"; w = t.k or f(); print(w)`, want: "nil", gopherRight: true},
	{name: "and chain with a false field into a local", src: `local t = {k = false}; local w = "old"; w = t.k and 1 and 2; print(w)`, want: "false"},
	{name: "parenthesised and with a false field into a local", src: `local t = {k = false}; local w = "old"; w = (t.k and 1) and 2; print(w)`, want: "false"},
	{name: "and of a comparison into a local", src: `local t = {k = false}; local w = "old"; w = t.k and (w == "old"); print(w)`, want: "false"},
	{name: "and-or with a false field into a local", src: `local t = {k = false}; local w = "old"; w = t.k and 1 or nil; print(w)`, want: "nil", gopherRight: true},
	{name: "not of a false field and into a local", src: `local t = {k = false}; local w = "old"; w = not t.k and t.k; print(w)`, want: "false", gopherRight: true},
	// Intermediate results written into the target before it is read.
	{name: "or then and reads the target", src: `local v, x = 0, "old"; x = (v or 1) and x; print(x)`, want: "old"},
	{name: "or of fields then and reads the target", src: `local t = {y = 3}; local x = "old"; x = (t.y or 1) and x; print(x)`, want: "old"},
	{name: "and then or reads the target", src: `local t = {k = false}; local x = 2; x = (t.k and 1) or (x and 4); print(x)`, want: "4", gopherRight: true},
	// The same expressions into globals, upvalues and fields were right
	// already and must stay so.
	{name: "and with a false field into a global", src: `local t = {k = false}; w = "old"; w = t.k and 1; print(w)`, want: "false", gopherRight: true},
	{name: "and with a false field into an upvalue", src: `
		local t = {k = false}; local w = "old"
		local function f() w = t.k and 1 end
		f(); print(w)`, want: "false", gopherRight: true},
	{name: "and with a false field into a field", src: `local t = {k = false, w = "old"}; t.w = t.k and 1; print(t.w)`, want: "false", gopherRight: true},
	{name: "or then and into a field", src: `local v, t = 0, {x = "old"}; t.x = (v or 1) and t.x; print(t.x)`, want: "old", gopherRight: true},
	// `(...)` into an existing local.
	{name: "parenthesised varargs into a local", src: `local a, b = false, 0; a = (...); print(b)`, want: "0"},
	{name: "parenthesised varargs keep the first", src: `
		local function f(...) local a, b = false, 0; a = (...); return a, b end
		print(f(7, 8))
		print(f())`, want: "7\t0\nnil\t0"},
	// One target, several values: everything is evaluated before the store.
	{name: "one target with a later call", src: `local x, seen = 1; local function f() seen = x end; x = 2, f(); print(x, seen)`, want: "2\t1"},
	{name: "one field target with a later call", src: `
		local t = {x = 1}; local seen
		local function f() seen = t.x end
		t.x = 2, f(); print(t.x, seen)`, want: "2\t1", gopherRight: true},
	{name: "one global target with a later call", src: `
		x = 1; local seen
		local function f() seen = x end
		x = 2, f(); print(x, seen)`, want: "2\t1", gopherRight: true},
	// Generic for over an iterator whose expression contains a call.
	{name: "for over a field of a call's result", src: `
		local function mod() return {iter = function(t) return ipairs(t) end} end
		for i, v in mod().iter({5, 6}) do print(i, v) end`, want: "1\t5\n2\t6"},
	{name: "for over a method of a computed receiver", src: `
		local mt = {__add = function(a, b) return a end}
		local function new() return setmetatable({it = function(self) return ipairs({7}) end}, mt) end
		for k, v in (new() + 1):it() do print(k, v) end`, want: "1\t7"},
	{name: "for over gmatch of a concatenation", src: `
		for a in (tostring(12) .. "x"):gmatch("%d") do print(a) end`, want: "1\n2"},
	{name: "for over a method of a call's result", src: `
		local function mk() return {it = function(self) return ipairs({8}) end} end
		for i, v in mk():it() do print(i, v) end`, want: "1\t8", gopherRight: true},
	{name: "for keeps state and control from the explist", src: `
		local function mk() return {f = function() return next, {a = 1}, nil end} end
		for k, v in mk().f() do print(k, v) end`, want: "a\t1"},
	{name: "for over next and a field of a call's result", src: `
		local function mk() return {t = {a = 1}} end
		for k, v in next, mk().t do print(k, v) end`, want: "a\t1"},
	{name: "for over a computed key's function", src: `
		local keys = {"f"}
		local function mk() return {f = ipairs} end
		for i, v in mk()[keys[1]]({4}) do print(i, v) end`, want: "1\t4"},
	{name: "for over a method of a computed key", src: `
		local t = {5}
		local o = {{iter = function(self) return ipairs(t) end}}
		for i, v in o[#t]:iter() do print(i, v) end`, want: "1\t5", gopherRight: true},
	{name: "for over a computed callee breaks and nests", src: `
		local function mk() return {it = function(t) return ipairs(t) end} end
		local s = ""
		for _, x in mk().it({1, 2, 3}) do
			for _, y in mk().it({10, 20}) do
				if y == 20 then break end
				s = s .. x * y .. " "
			end
		end
		print(s)`, want: "10 20 30 "},
}

// snippetCases are every snippet above, for the tests that run them all.
var snippetCases = append(assignCases[:len(assignCases):len(assignCases)], compilerCases...)

// Each case not marked gopherRight must be able to fail: plain gopher-lua
// gets it wrong. If this test fails, upstream has fixed a miscompile and the
// case no longer shows a defect of gopher-lua's compiler.
func TestPlainGopherLuaMiscompilesTheseShapes(t *testing.T) {
	for _, tc := range compilerCases {
		L := lua.NewState()
		out := captureOrError(L, tc.src)
		L.Close()
		if (out == tc.want) != tc.gopherRight {
			t.Errorf("%s: plain gopher-lua prints %q (Lua 5.1: %q), right marked %v", tc.name, out, tc.want, tc.gopherRight)
		}
	}
}

func captureOrError(L *lua.LState, src string) (out string) {
	defer func() {
		if recover() != nil {
			out = "panic"
		}
	}()
	var b strings.Builder
	L.SetGlobal("print", L.NewFunction(func(L *lua.LState) int {
		for i := 1; i <= L.GetTop(); i++ {
			if i > 1 {
				b.WriteString("\t")
			}
			b.WriteString(L.ToStringMeta(L.Get(i)).String())
		}
		b.WriteString("\n")
		return 0
	}))
	if err := L.DoString(src); err != nil {
		return "error: " + err.Error()
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// A statement of these shapes reports errors at the user's line.
func TestTheseShapesReportErrorsAtTheUsersLine(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"and into a local", "local w = 1\n\nw = nothing.k and 1", "<string>:3:"},
		{"one target, two values", "local w = 1\n\nw = 2, nothing.k", "<string>:3:"},
		{"for explist", "local x\n\nfor a in (x .. 'y'):gmatch('.') do end", "<string>:3:"},
		{"for body", "local function mk() return {it = function() return ipairs({1}) end} end\nfor _ in mk().it() do\n  local y = nil + 1\nend", "<string>:3:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			L := lua.NewState()
			defer L.Close()
			L.Push(mustLoad(t, L, tc.src))
			err := L.PCall(0, 0, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one at %q", err, tc.want)
			}
		})
	}
}
