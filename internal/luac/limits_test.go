package luac

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// A store is attributed to the line of the value it stores, as Lua 5.1
// attributes it: an error in `t.x` on line 3, whose value ends on line 5,
// is reported where lua5.1 reports it.
func TestAssignmentErrorsPointWhereLua51Does(t *testing.T) {
	runLua51(t, "")
	for _, src := range []string{
		"local t, a = nil, 1\n\nt.x,\n  a = a,\n  2\n",
		"local t, a = nil, 1\n\na,\n  t.x = a,\n  2\n",
		"local t = nil\nt.x = 1\n",
		"local a = {}\nlocal b = a.x.y\n",
	} {
		want := runLua51(t, "print(select(2, pcall(loadstring("+fmt.Sprintf("%q", src)+", '=src'))))")
		L := lua.NewState()
		fn, err := LoadString(L, src, "=src")
		if err != nil {
			t.Fatal(err)
		}
		L.Push(fn)
		got := L.PCall(0, 0, nil)
		L.Close()
		if got == nil || !strings.HasPrefix(got.Error(), want[:strings.Index(want, ": ")+2]) {
			t.Errorf("%q: error %v, lua5.1 says %q", src, got, want)
		}
	}
}

// reverseLocals declares n locals holding 1..n and reverses them in one
// statement.
func reverseLocals(n int) string {
	names := make([]string, n)
	inits := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("v%d", i+1)
		inits[i] = fmt.Sprint(i + 1)
	}
	values := make([]string, n)
	for i := range values {
		values[i] = names[n-1-i]
	}
	return "local " + strings.Join(names, ", ") + " = " + strings.Join(inits, ", ") + "\n" +
		strings.Join(names, ", ") + " = " + strings.Join(values, ", ") + "\n" +
		"return v1, v" + fmt.Sprint(n) + "\n"
}

// Each target but the last costs one register on top of the user's locals,
// so 250 registers allow 125 local targets, as in Lua 5.1; beyond that the
// chunk fails to compile with Lua 5.1's message, never a panic.
func TestLocalTargetsUpToLua51sLimitCompile(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	fn, err := LoadString(L, reverseLocals(125), "<string>")
	if err != nil {
		t.Fatalf("125 targets: %v", err)
	}
	L.Push(fn)
	if err := L.PCall(0, 2, nil); err != nil {
		t.Fatal(err)
	}
	if first, last := L.Get(-2), L.Get(-1); first != lua.LNumber(125) || last != lua.LNumber(1) {
		t.Errorf("after reversing, v1, v125 = %v, %v; want 125, 1", first, last)
	}
	_, err = LoadString(L, reverseLocals(126), "<string>")
	var apiErr *lua.ApiError
	if !errors.As(err, &apiErr) || apiErr.Type != lua.ApiErrorSyntax {
		t.Fatalf("126 targets: error %v, want a syntax *lua.ApiError", err)
	}
	if !strings.Contains(err.Error(), "function or expression too complex") {
		t.Errorf("126 targets: error %v", err)
	}
}

// Lua 5.1's limits are 250 registers and 200 locals a function (gopher-lua's
// compiler stopped at 200 registers): a call with 240 arguments, or one
// with 6 after 195 locals, runs as in lua5.1 (issue 30, item 8).
func TestCallsWithinLua51sRegisterLimitRun(t *testing.T) {
	runLua51(t, "")
	args := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprint(i)
		}
		return strings.Join(s, ", ")
	}
	locals := make([]string, 195)
	for i := range locals {
		locals[i] = fmt.Sprintf("l%d", i)
	}
	for name, src := range map[string]string{
		"240 arguments":                    "print(select('#', " + args(240) + "), (select(240, " + args(240) + ")))",
		"195 locals and a 6-argument call": "local " + strings.Join(locals, ", ") + " = 1\nprint(l0, l194, select('#', " + args(6) + "))",
		"200 locals":                       "local " + strings.Join(append(locals, "a", "b", "c", "d", "e"), ", ") + " = 7\ne = 5\nprint(l0, e)",
		"150 concatenations":               "local x = 1\nprint(#(" + strings.Repeat("x .. ", 150) + "x))",
	} {
		want := runLua51(t, src)
		if got := runLuac(t, src); got != want {
			t.Errorf("%s: printed %q, lua5.1 prints %q", name, got, want)
		}
	}
}

// Past the limits, compiling fails with Lua 5.1's words.
func TestPastLua51sLimitsIsACompileError(t *testing.T) {
	locals := make([]string, 201)
	for i := range locals {
		locals[i] = fmt.Sprintf("l%d", i)
	}
	args := strings.Repeat("1, ", 248) + "1"
	for src, want := range map[string]string{
		"local " + strings.Join(locals, ", "):                               "main function has more than 200 local variables",
		"local function f()\nlocal " + strings.Join(locals, ", ") + "\nend": "function at line 1 has more than 200 local variables",
		"print(" + args + ")":                                               "function or expression too complex",
	} {
		L := lua.NewState()
		_, err := LoadString(L, src, "<string>")
		L.Close()
		var apiErr *lua.ApiError
		if !errors.As(err, &apiErr) || apiErr.Type != lua.ApiErrorSyntax || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: error %v, want a syntax error saying %q", src, err, want)
		}
	}
}

// Lua 5.1 stops at 262,143 constants a function ("constant table
// overflow"); glua keeps the ones past that in a table of its own, so a
// literal of a million numbers loads, and every use of a constant (value,
// key, method name, global name) works past the slots.
func TestConstantsPastLua51sSlotsLoad(t *testing.T) {
	var b strings.Builder
	b.WriteString("local t = {")
	for i := 1; i <= 270000; i++ {
		fmt.Fprintf(&b, "%d.5,", i)
	}
	b.WriteString("}\n")
	b.WriteString("local o = {}\nfunction o:after(x) return x .. ' after' end\n")
	b.WriteString("past_global = o:after('value') .. ' ' .. 0.0625\n")
	b.WriteString("local k = {['a key past'] = 270001.25}\n")
	b.WriteString("print(#t, t[1], t[262143], t[270000], past_global, k['a key past'])\n")
	want := "270000\t1.5\t262143.5\t270000.5\tvalue after 0.0625\t270001.25"
	if got := runLuac(t, b.String()); got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
}

// Past 250 registers Lua 5.1 says "function or expression too complex
// near 'tok'", naming the token its parser holds when the code generator
// runs out, and the line of that token. Each source is loaded by both and
// the messages compared byte for byte.
func TestRegisterLimitErrorsNameLua51sToken(t *testing.T) {
	runLua51(t, "")
	ones := func(n int) string { return strings.TrimSuffix(strings.Repeat("1, ", n), ", ") }
	names := func(prefix string, n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("%s%d", prefix, i)
		}
		return strings.Join(s, ", ")
	}
	locals := "local " + names("a", 199) + "\n"
	terms := func(format string, n int, sep string) string {
		s := make([]string, n)
		for i := range s {
			s[i] = strings.ReplaceAll(format, "#", fmt.Sprint(i))
		}
		return strings.Join(s, sep)
	}
	for _, src := range []string{
		"print(" + ones(260) + ")",
		"local t = {f(" + ones(255) + ")}",
		"f(" + terms("{1, 2, 3}", 260, ", ") + ")",
		"return " + ones(260),
		"local a, b = " + ones(260),
		"a, b = " + ones(260),
		"local function f(" + names("p", 150) + ")\n g(" + ones(120) + ")\n end",
		"local function f(" + names("p", 150) + ")\n g(" + terms("x#", 120, ",\n") + ")\n end",
		locals + "local x = {" + terms("a#", 53, ", ") + "}",
		locals + "local x = {[a0] = a1 + a2, a3 .. a4, f(a5)(a6), " + terms("{a#, a# + 1}", 60, ", ") + "}",
		locals + "local x = " + terms("f(a#) * (", 55, "") + "1" + strings.Repeat(")", 55),
		locals + "local x = " + terms("a#", 60, " .. "),
		locals + "local x = a1 and (a2 or (a3 and f(" + ones(60) + ")))",
		locals + "x = t:m(" + ones(60) + ")",
		locals + "x = t.a.b[c](" + ones(60) + ")",
		locals + "x = {" + terms("k# = a#", 60, ", ") + ", f(" + ones(60) + ")}",
		locals + "x = -a1 + #a2 - (not a3 and 1 or 2) * f(" + ones(60) + ")",
		locals + "x = g(" + terms("'s#'", 60, ", ") + ")",
		locals + "x = g{" + ones(60) + "}",
		locals + "x = g(" + ones(49) + ", [[long\nstring]], 1, 2)",
		locals + "for i = 1, 2 do x = g(" + ones(47) + ") end",
		locals + "local y, z = g(" + ones(45) + "), " + ones(10),
	} {
		want := runLua51(t, "print(select(2, loadstring("+fmt.Sprintf("%q", src)+", '=src')))")
		L := lua.NewState()
		_, err := LoadString(L, src, "=src")
		L.Close()
		if want == "" {
			t.Fatalf("lua5.1 loads %q", src[max(0, len(src)-60):])
		}
		if err == nil || err.Error() != want {
			t.Errorf("%q: error %v, lua5.1 says %q", src[max(0, len(src)-60):], err, want)
		}
	}
}

// A jump past Lua 5.1's reach (131,071 instructions) is "control structure
// too long near 'tok'", with the token and line lua5.1 names.
func TestLongJumpErrorsNameLua51sToken(t *testing.T) {
	runLua51(t, "")
	body := strings.Repeat("a = 1\n", 70000) // two instructions a line
	for _, src := range []string{
		"while x do\n" + body + "end\n",
		"if x then\n" + body + "end\n",
		"if x then b = 1 else\n" + body + "end\nlocal c\n",
		"for i = 1, 2 do\n" + body + "end\n",
		"for k, v in pairs(t) do\n" + body + "end\n",
		"repeat\n" + body + "until x\n",
		"local function f()\nif x then\n" + body + "end\nend\nprint(1)\n",
	} {
		want := runLua51(t, "print(select(2, loadstring("+fmt.Sprintf("%q", src)+", '=src')))")
		if want == "" {
			t.Fatalf("lua5.1 loads %q", src[:20])
		}
		L := lua.NewState()
		_, err := LoadString(L, src, "=src")
		L.Close()
		if err == nil || err.Error() != want {
			t.Errorf("%q...: error %v, lua5.1 says %q", src[:20], err, want)
		}
	}
}
