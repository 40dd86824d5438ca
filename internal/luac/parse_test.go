package luac

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/lua51"
)

// names returns n distinct names with prefix p, joined by sep.
func names(p string, n int, sep string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("%s%d", p, i+1)
	}
	return strings.Join(parts, sep)
}

// badSources are sources lua5.1 refuses, each for its own reason.
var badSources = []string{
	// Tokens.
	"x = 1e", "x = 3..2", "x = 0x", "x = 1_0", "x = 1.2.3", "x = 08x", "x = 1e+", "x = .5.", "x = 0xg",
	"x = '\\300'", "x = '\\256'", "x = 'ab\\999'", "x = '\\2555'  'x' +",
	"x = [==[ a", "x = [[ a", "x = [==[ a ]=]", "x = [[ a [[ b ]]", "--[[ [[ ]]", "--[==[ x", "--[[ x",
	"x = [=", "x = [==x", "x = \"abc", "x = 'abc\ny'", "x = 'abc\\", "x = 'a\\\n", "x = '\r'",
	"x = ~ 1", "x = @", "x = $", "x = \x01", "x = \x00", "x = !", "x = `", "x = 1 ? 2",
	"x = '\xff", "x = \xff",
	// Statements.
	";", "x = 1;;", ";x = 1", "f\n(g)", "local x = f\n(g)", "a.b\n(c)()", "return return", "return 1 x = 2",
	"break", "do break end", "function f() break end", "if x then break end", "x = 1 break",
	"for i=1 do end", "for i do end", "for i, j = 1, 2 do end", "for 1 = 1, 2 do end", "for i = 1, 2 end",
	"for k, v in pairs(t) end", "for k, in pairs(t) do end", "for do end",
	"function f(a,) end", "function f(a b) end", "function f(..., a) end", "function (a) end",
	"function f.a:b.c() end", "function f:() end", "function f", "function f(", "function f() return",
	"local function f.x() end", "local function() end", "local 1 = 2", "local x =", "local x, = 1",
	"local x <const> = 1", "goto continue", "::label::", "goto = 1 goto",
	"if x then", "if x then else elseif y then end", "if x end", "if then end", "elseif x then end",
	"while x end", "while do end", "while true do", "repeat", "repeat until", "repeat x = 1", "until x",
	"do", "do do end", "end", "else", "then",
	"x =", "x = = 1", "x y = 1", "x, = 1", "x, f() = 1", "f() = 1", "(f())", "(a) = 1", "a.b", "a:b",
	"a:b.c()", "a:b = 1", "a.1 = 2", "a[1 = 2", "a[] = 1", "1 = 2", "'x' = 1", "nil = 1", "x.y.z",
	"x = {,}", "x = {1,,2}", "x = {1 2}", "x = {[1] 2}", "x = {[1] = }", "x = {a = }", "x = {", "x = {\n\n",
	"x = (1", "x = (1))", "x = )", "x = f(", "x = f(1,)", "x = f(,1)", "x = a..", "x = 1 +", "x = * 2",
	"x = not", "x = #", "x = -", "x = 1 + + 2", "x = a.", "x = a:", "x = a:b", "x = a:b + 1", "x = a[",
	"x = function", "x = function(", "x = function() ", "function f() x = ... end",
	"function f(a) return ... end", "x = function(...) return function() return ... end end",
	"return (...", "x = 1 y", "x = 'a' 'b'", "print 1", "print('a' 'b')",
	"local t = {}\nt.x\n= 1 2",
	"local a = 1\n\n\nlocal b = = 2",
	"f(\n\n1,\n\n2",
	"x = [[\nline\nline]] +",
	"function f()\n  if x then\n    return 1\n",
	"local t = {\n  a = 1,\n  b = 2\n",
	"x = f(1,\n2\n",
	"while true do\n  x = 1\nend\nend",
	// Limits.
	"local " + names("v", 201, ", "),
	"local " + names("v", 200, ", ") + "; local w = 1",
	"function f()\n  local " + names("v", 201, ", ") + "\nend",
	"function f(" + names("p", 200, ", ") + ", ...) end",
	"local " + names("v", 198, ", ") + "\nfor i = 1, 2 do end",
	"local " + names("v", 196, ", ") + "\nfor k, v in pairs(t) do end",
	"local " + names("u", 61, ", ") + "\nfunction f() return " + names("u", 61, " + ") + " end",
	"local " + names("u", 40, ", ") + "\nfunction f() local " + names("w", 30, ", ") +
		"\n return function() return " + names("u", 40, " + ") + " + " + names("w", 30, " + ") + " end end",
	names("a", 199, ", ") + " = 1",
	"function f() " + names("a", 198, ", ") + " = 1 end",
	strings.Repeat("do ", 300) + strings.Repeat("end ", 300),
	strings.Repeat("do ", 198) + strings.Repeat("end ", 198),
	"x = " + strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300),
	"x = " + strings.Repeat("(", 197) + "1" + strings.Repeat(")", 197),
	"x = a" + strings.Repeat(" .. a", 300),
	"x = a" + strings.Repeat(" .. a", 197),
	"x = " + strings.Repeat("- ", 300) + "1",
	"x = " + strings.Repeat("not ", 197) + "1",
	"x = " + strings.Repeat("f(", 200) + strings.Repeat(")", 200),
	"x = " + strings.Repeat("{", 200) + strings.Repeat("}", 200),
	"x = " + strings.Repeat("function() return ", 100) + "1" + strings.Repeat(" end", 100),
	strings.Repeat("if x then ", 199) + strings.Repeat("end ", 199),
	"x = 2" + strings.Repeat(" ^ 2", 300),
}

// loadErrorsLua51 returns lua5.1's loadstring message for each source, one
// process for all of them.
func loadErrorsLua51(t *testing.T, sources []string) []string {
	t.Helper()
	var prog strings.Builder
	prog.WriteString("local sources = {\n")
	for _, s := range sources {
		prog.WriteString(luaQuote(s) + ",\n")
	}
	prog.WriteString("}\nfor _, s in ipairs(sources) do\n  local f, msg = loadstring(s)\n  io.write(msg or \"(loads)\", \"\\0\")\nend\n")
	out := runLua51(t, prog.String())
	msgs := strings.Split(out, "\x00")
	if len(msgs) != len(sources)+1 {
		t.Fatalf("lua5.1 gave %d messages for %d sources", len(msgs)-1, len(sources))
	}
	return msgs[:len(sources)]
}

// luaQuote writes s as a Lua string literal, any byte escaped.
func luaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\%03d", c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func TestSyntaxErrorsAreWordedAsLua51WordsThem(t *testing.T) {
	if len(badSources) < 100 {
		t.Fatalf("only %d bad sources", len(badSources))
	}
	want := loadErrorsLua51(t, badSources)
	L := lua.NewState()
	defer L.Close()
	for i, src := range badSources {
		if want[i] == "(loads)" {
			t.Errorf("%q: lua5.1 loads it; the case is wrong", trim(src))
			continue
		}
		_, err := LoadString(L, src, src)
		if err == nil {
			t.Errorf("%q: loaded, lua5.1 says %q", trim(src), want[i])
			continue
		}
		if err.Error() != want[i] {
			t.Errorf("%q:\n got %q\nwant %q", trim(src), err, want[i])
		}
		var apiErr *lua.ApiError
		var se *SyntaxError
		if !errors.As(err, &apiErr) || apiErr.Type != lua.ApiErrorSyntax || !errors.As(apiErr.Cause, &se) {
			t.Errorf("%q: error %#v is not a syntax *lua.ApiError caused by a *SyntaxError", trim(src), err)
		}
	}
}

func trim(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// Sources at Lua 5.1's limits load, one step short of the errors above.
func TestSourcesAtLua51LimitsLoad(t *testing.T) {
	sources := []string{
		"local " + names("v", 200, ", "),
		"function f(" + names("p", 199, ", ") + ", ...) end",
		"local " + names("v", 196, ", ") + "\nfor i = 1, 2 do end",
		"local " + names("v", 195, ", ") + "\nfor k, v in pairs(t) do end",
		"local " + names("u", 60, ", ") + "\nfunction f() return " + names("u", 60, " + ") + " end",
		names("a", 198, ", ") + " = 1",
		"function f() " + names("a", 197, ", ") + " = 1 end",
		strings.Repeat("do ", 197) + strings.Repeat("end ", 197),
		"x = " + strings.Repeat("(", 196) + "1" + strings.Repeat(")", 196),
		"x = a" + strings.Repeat(" .. a", 196),
		"local goto = 1; goto = goto + 1",
		"x = 1;",
		"return;",
		"f(g);\n(h)()",
		"local t = {}; t.x = 1",
		"(f)()",
	}
	want := loadErrorsLua51(t, sources)
	L := lua.NewState()
	defer L.Close()
	for i, src := range sources {
		if want[i] != "(loads)" {
			t.Errorf("%q: lua5.1 refuses it (%s); the case is wrong", trim(src), want[i])
		}
		_, err := LoadString(L, src, src)
		if (err == nil) != (want[i] == "(loads)") {
			t.Errorf("%q: error %v, lua5.1 says %q", trim(src), err, want[i])
		}
	}
}

// Nesting is refused at Lua 5.1's 200 levels, so that no source takes more
// than linear time to parse.
func TestDeepNestingIsRefusedFastAndLargeSourcesParseFast(t *testing.T) {
	const n = 100000
	cases := []struct {
		name, src, want string
	}{
		{"nested do blocks", strings.Repeat("do ", n) + strings.Repeat("end ", n), "chunk has too many syntax levels"},
		{"a long .. chain", "x = a" + strings.Repeat(" .. a", n), "chunk has too many syntax levels"},
		{"nested parentheses", "x = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n), "chunk has too many syntax levels"},
		{"nested if", strings.Repeat("if x then ", n) + strings.Repeat("end ", n), "chunk has too many syntax levels"},
		{"nested calls", "x = " + strings.Repeat("f(", n) + strings.Repeat(")", n), "chunk has too many syntax levels"},
	}
	for _, tc := range cases {
		start := time.Now()
		_, err := ParseBytes([]byte(tc.src), "=big", StringLevels)
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		if took > 500*time.Millisecond {
			t.Errorf("%s: took %v to refuse", tc.name, took)
		}
	}

	// About a megabyte of ordinary code: functions, loops, tables, strings.
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "function M.f%d(a, b, ...)\n  local t = {x = a, y = b, %q, [a] = b * 2}\n", i, "s"+fmt.Sprint(i))
		fmt.Fprintf(&b, "  for i = 1, #t do t[i] = t[i] .. 'x' .. i end\n  if a > b then return a - b elseif a == b then return 0 else return M.f%d(b, a) end\nend\n", i)
	}
	src := []byte(b.String())
	start := time.Now()
	if _, err := ParseBytes(src, "=big", StringLevels); err != nil {
		t.Fatalf("the large source: %v", err)
	}
	took := time.Since(start)
	t.Logf("parsed %d bytes in %v", len(src), took)
	if took > 1500*time.Millisecond { // about 0.07 s of CPU; quadratic time would take minutes
		t.Errorf("parsing %d bytes took %v", len(src), took)
	}
}

// Numbers and strings that gopher-lua's parser reads differently from
// lua5.1 (listed in treeDifferences) give lua5.1's values.
func TestNumbersAndStringsReadAsLua51Reads(t *testing.T) {
	src := `print(1e999, -1e999, 0010, 00.5, 0x1p4, 0X10, 0xffffffffffffffffff, 9007199254740993, 1e-400, 5., .5)
print(("\65\066\0067\x\z\q"):byte(1, -1))
print(#"\0\00\000", ("\255"):byte(), #[==[
]]]=]]==], [[a
b]] == "a\nb", "a\
b" == "a\nb")
print(#"tab\tnew\nret\rbell\avt\vff\fbs\b")`
	want := runLua51(t, src)
	L := lua.NewState()
	defer L.Close()
	lua51.Open(L)
	if got := runCaptured(t, L, mustLoad(t, L, src)); got != want {
		t.Errorf("printed\n%s\nlua5.1 prints\n%s", got, want)
	}
}

// Any input either parses or gives a lua5.1-shaped message naming the
// chunk; none panics.
func FuzzParseNeverPanics(f *testing.F) {
	for _, s := range parseSnippets {
		f.Add(s)
	}
	for _, s := range badSources {
		if len(s) < 200 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		_, err := ParseBytes([]byte(src), src, StringLevels)
		if err == nil {
			return
		}
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.HasPrefix(se.Message, chunkID(src, syntaxSize)+":") {
			t.Errorf("%q: error %v does not name the chunk", src, err)
		}
	})
}

// Generated sources with characters cut out and tokens put in at random
// load, or fail with the message lua5.1 gives, byte for byte.
func TestMutatedSourcesFailAsLua51Fails(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 5))
	tokens := []string{"(", ")", "end", "=", ",", ";", "..", "...", "'", "\"", "[[", "]]", "[", "]", "{", "}",
		"local", "function", "return", "break", "if", "then", "\n", "1e", "0x", "\\", "--[[", ":", ".", "#",
		"not", "goto", "::", "~", "==", "for", "in", "do", "until", "repeat", "else", "elseif", "\x00", "\\300"}
	srcs := make([]string, 5000)
	for i := range srcs {
		g := &syntaxGen{rng: rng, vararg: true}
		g.block(3)
		s := g.b.String()
		for m := rng.IntN(6) + 1; m > 0 && len(s) > 0; m-- {
			p := rng.IntN(len(s) + 1)
			if rng.IntN(3) == 0 {
				s = s[:p] + s[min(len(s), p+rng.IntN(5)+1):]
			} else {
				s = s[:p] + " " + tokens[rng.IntN(len(tokens))] + " " + s[p:]
			}
		}
		srcs[i] = s
	}
	want := loadErrorsLua51(t, srcs)
	failed := 0
	for i, s := range srcs {
		got := "(loads)"
		if _, err := ParseBytes([]byte(s), s, StringLevels); err != nil {
			got = err.Error()
			failed++
		}
		if got != want[i] {
			t.Errorf("%q:\n got %q\nwant %q", s, got, want[i])
		}
	}
	if failed < len(srcs)/2 {
		t.Errorf("only %d of %d sources failed to load", failed, len(srcs))
	}
}
