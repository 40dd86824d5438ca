package lua51

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

func TestFrontierPatternsMatchAsInLua51(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "find, match and gsub with %f", src: `
print(("THE (quick) fox"):find("%f[%a]%a+"))
print(("THE (quick) fox"):gsub("%f[%a]%a+", "W"))
print(("THE (quick) fox"):gsub("%f[%a](%a)(%a*)", function(a, b) return a:lower() .. b:upper() end))
print(("THE (quick) fox"):match("%f[%l]%a+"))
print(("THE (quick) fox"):match("%f[%a]%a+%f[%A]", 6))
print(("hello world"):find("%f[%w]%w+", -5))
print(("key = value"):gsub("%f[%w](%w+)", {key = "K", value = "V"}))
print(("aaa"):gsub("%f[a]a", "b", 1))`,
			want: "1\t3\nW (W) W\t3\ntHE (qUICK) fOX\t3\nquick\nquick\n7\t11\nK = V\t2\nbaa\t1"},
		{name: "the subject's ends read as NUL", src: `
local o = {} for w in ("one two  three"):gmatch("%f[%S]%S+") do o[#o+1] = w end print(table.concat(o, "|"))
local it = ("a.b.c"):gmatch("()%f[%.]") print(it(), it(), it())
print(("x"):gsub("%f[%w]", "<"))
print(("ab"):gsub("%f[%W]", ">"))`,
			want: "two|three\n2\t4\n<x\t1\nab>\t1"},
		{name: "plain find takes %f literally", src: `
print(("THE (quick) fox"):find("%f[%a]%a+", 1, true))
print(("a%f[%a]x"):find("%f[%a]", 1, true))`,
			want: "nil\n2\t7"},
		{name: "errors", src: `
print(pcall(function() return ("x"):find("%fx") end))
print(pcall(function() return ("abc"):gsub("%f[%a]", {a = true}) end))
print(pcall(function() return ("abc"):gsub("%f[%a]%a", {a = true}) end))`,
			want: "false\tstdin:2: missing '[' after '%f' in pattern\ntrue\tabc\t1\nfalse\tstdin:4: invalid replacement value (a boolean)"},
	})
}

// randomPattern writes a Lua pattern from pieces that exercise every
// part of a matcher: classes, sets, quantifiers, anchors, captures,
// back-references, %b and %f.
func randomPattern(r *rand.Rand) string {
	atoms := []string{"a", "b", ".", "%a", "%d", "%s", "%W", "[ab]", "[^a]", "[a-c%d]", "[]]", "%%", "%.", "x"}
	var b strings.Builder
	if r.IntN(5) == 0 {
		b.WriteByte('^')
	}
	open := 0
	for i, n := 0, 1+r.IntN(6); i < n; i++ {
		switch k := r.IntN(12); {
		case k < 6:
			b.WriteString(atoms[r.IntN(len(atoms))])
			b.WriteString([]string{"", "", "*", "+", "-", "?"}[r.IntN(6)])
		case k == 6:
			b.WriteString("(")
			open++
		case k == 7 && open > 0:
			b.WriteString(")")
			open--
		case k == 8:
			b.WriteString("()")
		case k == 9:
			b.WriteString("%b()")
		case k == 10:
			b.WriteString([]string{"%f[%a]", "%f[%A]", "%f[ab]", "%f[%z]"}[r.IntN(4)])
		case k == 11 && open == 0 && strings.Contains(b.String(), "("):
			b.WriteString("%1")
		}
	}
	for ; open > 0; open-- {
		b.WriteString(")")
	}
	if r.IntN(5) == 0 {
		b.WriteByte('$')
	}
	return b.String()
}

// The pattern matcher on every kind of pattern beside lua5.1: find,
// match, gmatch and gsub must agree on each.
func TestOwnMatcherAgreesWithLua51OnRandomPatterns(t *testing.T) {
	lua51Path(t)
	r := rand.New(rand.NewPCG(30, 11))
	subjects := []string{"", "a", "ab ba", "(a(b)c) d1", "aab]x.b", "x%1 ab(c)", "  abc123 ", "ba(ab)ab"}
	var src strings.Builder
	src.WriteString("local function show(ok, ...) local t = {tostring(ok)} for i = 1, select('#', ...) do t[#t+1] = tostring((select(i, ...))) end return table.concat(t, ' ') end\n")
	malformed := []string{"[a", "%", "(a", "a)", "%1", "(a%2)", "%b", "%fa", "[%", "a(()", "((a)%2)"}
	for i := 0; i < 500+len(malformed); i++ {
		s, p := subjects[r.IntN(len(subjects))], randomPattern(r)
		if i >= 500 {
			p = malformed[i-500]
		}
		fmt.Fprintf(&src, "do local s, p = %q, %q\n", s, p)
		src.WriteString("print(p, show(pcall(function() return s:find(p) end)), show(pcall(function() return s:match(p, 2) end)))\n")
		src.WriteString("print(show(pcall(function() local t = {} for a, b in s:gmatch(p) do t[#t+1] = tostring(a) .. '/' .. tostring(b) if #t > 20 then break end end return table.concat(t, ',') end)))\n")
		src.WriteString("print(show(pcall(function() return s:gsub(p, '<%0>') end)), show(pcall(function() return s:gsub(p, function(a) return a and '[' .. tostring(a) .. ']' end, 3) end)))\nend\n")
	}
	want := runLua51(t, src.String())
	got := runGlua(t, src.String())
	if got != want {
		wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
		for i := range wl {
			if i >= len(gl) || wl[i] != gl[i] {
				g := "(missing)"
				if i < len(gl) {
					g = gl[i]
				}
				t.Fatalf("line %d differs:\nlua5.1: %s\nglua:   %s", i+1, wl[i], g)
			}
		}
		t.Fatalf("glua printed more lines than lua5.1")
	}
}

// TestPatternMatchingStopsAtTheContextsDeadline: a pattern that backtracks
// for minutes in find, match, gmatch and gsub stops with the context's
// error soon after its deadline, as the VM stops a script, and a state
// under a context matches as lua5.1 does.
func TestPatternMatchingStopsAtTheContextsDeadline(t *testing.T) {
	for _, call := range []string{
		`string.find(s, p)`, `string.match(s, p)`, `string.gsub(s, p, "x")`,
		`for m in string.gmatch(s, p) do end`, `string.find(s, "%f[a]" .. p)`,
	} {
		L := newState(t)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		L.SetContext(ctx)
		start := time.Now()
		err := L.DoString(`local s, p = ("a"):rep(40) .. "b", ("a*"):rep(40) .. "c"; ` + call)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") {
			t.Errorf("%s: %v", call, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s ran %v under a 200ms deadline", call, d)
		}
	}
	L := newState(t)
	L.SetContext(context.Background())
	got := runIn(t, L, `print(("hello world"):find("o w"), ("key = value"):match("(%w+)%s*=%s*(%w+)"), ("abc"):gsub("%w", "%0%0"))
		for k, v in string.gmatch("a=1, b=2", "(%w+)=(%w+)") do print(k, v) end`,
		func(L *lua.LState) error { return PCall(L, 0, 0, nil) })
	if want := "5\tkey\taabbcc\t3\na\t1\nb\t2"; got != want {
		t.Errorf("under a context:\n%q\nwant\n%q", got, want)
	}
}
