package luac

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// dumpTree writes every field of a syntax tree, positions included, and
// tells a nil slice from an empty one, so that two trees with equal dumps
// are the same node for node.
func dumpTree(stmts []ast.Stmt) string {
	var b strings.Builder
	dumpValue(&b, reflect.ValueOf(stmts), 0)
	return b.String()
}

func dumpValue(b *strings.Builder, v reflect.Value, depth int) {
	indent := strings.Repeat("  ", depth)
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			b.WriteString("nil\n")
			return
		}
		if v.Kind() == reflect.Interface {
			dumpValue(b, v.Elem(), depth)
			return
		}
		e := v.Elem()
		fmt.Fprintf(b, "%s", e.Type().Name())
		if ph, ok := v.Interface().(ast.PositionHolder); ok {
			fmt.Fprintf(b, "@%d-%d", ph.Line(), ph.LastLine())
		}
		b.WriteString("\n")
		dumpFields(b, e, depth+1)
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("nil slice\n")
			return
		}
		fmt.Fprintf(b, "[%d]\n", v.Len())
		for i := 0; i < v.Len(); i++ {
			b.WriteString(indent + "  - ")
			dumpValue(b, v.Index(i), depth+2)
		}
	case reflect.String:
		fmt.Fprintf(b, "%q\n", v.String())
	default:
		fmt.Fprintf(b, "%v\n", v.Interface())
	}
}

func dumpFields(b *strings.Builder, v reflect.Value, depth int) {
	indent := strings.Repeat("  ", depth)
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if f.Anonymous || !f.IsExported() {
			continue // the embedded bases hold the positions, dumped above
		}
		b.WriteString(indent + f.Name + ": ")
		dumpValue(b, v.Field(i), depth)
	}
}

// gopherLuaSuite returns the Lua 5.1 test suite files of gopher-lua's
// module, found from where its parser was compiled or through the go
// command, or none where neither is at hand (a test binary run elsewhere).
func gopherLuaSuite(t *testing.T) []string {
	t.Helper()
	var dirs []string
	if file, _ := runtime.FuncForPC(reflect.ValueOf(parse.Parse).Pointer()).FileLine(reflect.ValueOf(parse.Parse).Pointer()); filepath.IsAbs(file) {
		dirs = append(dirs, filepath.Dir(filepath.Dir(file)))
	}
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yuin/gopher-lua").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	for _, dir := range dirs {
		if files, _ := filepath.Glob(filepath.Join(dir, "_lua5.1-tests", "*.lua")); len(files) > 0 {
			return files
		}
	}
	t.Logf("gopher-lua's _lua5.1-tests not found; comparing the rest")
	return nil
}

// treeDifferences are the valid Lua 5.1 sources whose trees differ from
// gopher-lua's because gopher-lua reads them wrongly; each tree here is
// lua5.1's (checked by TestNumbersAndStringsReadAsLua51Reads). The other
// way round, sources gopher-lua takes and lua5.1 refuses ('\300', which
// gopher-lua wraps to a byte; 1e and 3..2, which it splits into tokens;
// ';;', goto and labels, the ambiguous f\n(g), a parenthesised call as a
// statement) are refused here with lua5.1's message, which the test checks
// against lua5.1.
var treeDifferences = map[string]string{
	"math.lua":                 "10e500 is inf in lua5.1; gopher-lua's tree has the text, which its compiler turns into nan",
	"x = 1e999":                "inf, as above",
	"x = 0010":                 "gopher-lua drops one leading zero and its compiler reads the rest, 010, as octal 8",
	"x = 0xffffffffffffffffff": "too big for an int64: gopher-lua's compiler fails to read the hex text and makes it nan",
}

// parseSnippets are small sources for the comparison with gopher-lua's
// parser: every statement and expression form, positions across lines,
// and the lexical corners.
var parseSnippets = []string{
	"", ";", "x = 1", "x = 1;", "local a", "local a, b = 1", "local a <close>",
	"local function f(a, b, ...) return a, b, ... end",
	"function a.b.c:d(x) return self, x end", "function f() end", "function f(...) end",
	"do end", "do local x = 1 end", "while x do break end", "repeat local y = 1 until y",
	"if a then elseif b then elseif c then else end", "if a then x = 1 end",
	"if a then\n x = 1\nelseif b then\n x = 2\nend",
	"for i = 1, 10 do end", "for i = 1, 10, 2 do local j = i end", "for k, v in pairs(t) do end",
	"for k in next, t do end",
	"return", "return 1", "return 1;", "return f()", "return (f())", "return ...", "return (...)",
	"x = ((f()))", "x = ((a))", "x = (a).b", "(a).b = 1", "(a)[1] = 2", "(f)()", "(f)():m()",
	"x = a.b[c]:d(e)(f)'g'{h}", `f"str"`, "f[[long]]", "f{1, 2, x = 3, [4] = 5; 6,}",
	"x = {}", "x = {f()}", "x = {...}", "x = {a = b, c}", "t = {[1]=1,[2]=2}",
	"x = -1", "x = - - 1", "x = not not a", "x = #t", "x = -a^b", "x = a^b^c", "x = 2^-3",
	"x = a .. b .. c", "x = a + b * c - d / e % f", "x = a < b == c", "x = a and b or c and d",
	"x = not a == b", "x = a .. b + c", "x = -x .. y", "x = a or b or c",
	"x = 1 + (2 + 3)", "x = (1 + 2) * 3", "x = (\n1 +\n2) *\n3",
	"x = function() end", "x = function(...) return ... end", "local f = function\n(a)\nend",
	"a, b.c, d[e] = 1, 2, 3", "a, b = f()", "a = f(), g()",
	"x = 'a\\tb\\nc\\\\\\'\\\"'", "x = \"\\65\\066\\0067\"", "x = '\\x41'", "x = '\\z'", "x = '\\\nb'",
	"x = '\\\r\nb'", "x = '\\q'", "x = '\\0'", "x = '\\255'",
	"x = [[\nfirst newline dropped]]", "x = [==[ ]] ]=] ]==]", "x = [=[\r\nx\r\ny]=]",
	"--[[ long\ncomment ]] x = 1", "--[==[ ]] ]==] x = 1", "-- short\nx = 1", "--[ not long\nx = 1",
	"x = 1e5", "x = 1E+5", "x = 1e-5", "x = .5", "x = 5.", "x = 0x10", "x = 0XfF", "x = 010",
	"x = 0010", "x = 1e999", "x = 0x1p4", "x = 0xffffffffffffffffff", "x = 3", "x = 00.5",
	"x = 9007199254740993", "x = 123456789012345678901234567890",
	"x\n=\n1", "local\nx\n=\n1", "f(\na,\nb\n)", "x = a\n.b\n.c", "t = {\n1,\n2\n}",
	"function f()\nreturn\nend", "while\nx\ndo\nend", "x = 1\r\ny = 2\rz = 3\n\rw = 4",
	"x = \"a\" .. 'b'", "x=1 y=2", "a.b.c.d = 1", "a:b():c()", "x = f{}[1]",
	"for i = 1, 2 do for j = 1, 2 do if i == j then break end end end",
	"local t = setmetatable({}, {__index = function(t, k) return k end})",
	"x = 1 -- trailing", "x = 1 --[[ trailing ]]", "\tx\v=\f1",
	// gopher-lua takes these; lua5.1 does not.
	"x = '\\300'", "x = 1e", "x = 3..2", "x = 0x", "x = 1;;", ";", "f\n(g)", "goto done; ::done::",
	"local goto = 1", "(f())", "x = [[ [[ ]]", "function f() return ... end",
}

func TestParserBuildsGopherLuaTrees(t *testing.T) {
	type source struct{ name, src string }
	var sources []source
	for _, s := range parseSnippets {
		sources = append(sources, source{s, s})
	}
	files := gopherLuaSuite(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	repoFiles := 0
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".lua") {
			files = append(files, path)
			repoFiles++
		}
		return nil
	})
	// In the repository (not a test binary copied elsewhere), every
	// testdata script and every script under scripts/ is compared.
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil && repoFiles < 50 {
		t.Fatalf("found only %d Lua files in the repository", repoFiles)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(string(src), "#") { // as loadfile skips it
			src = src[strings.IndexByte(string(src), '\n'):]
		}
		sources = append(sources, source{filepath.Base(f), string(src)})
	}
	compared := 0
	listed := map[string]bool{}
	var refused []source
	var messages []string
	for _, s := range sources {
		want, werr := parse.Parse(strings.NewReader(s.src), "x")
		got, gerr := ParseBytes([]byte(s.src), s.src, StringLevels)
		switch {
		case werr != nil && gerr != nil:
			continue
		case werr != nil:
			// Sources gopher-lua refuses and lua5.1 takes are checked
			// against lua5.1 by the error table.
			continue
		case gerr != nil:
			// gopher-lua takes it: lua5.1 must refuse it too, and word
			// it as we do (checked below, with lua5.1).
			refused = append(refused, s)
			messages = append(messages, gerr.Error())
			continue
		}
		compared++
		a, b := dumpTree(want), dumpTree(got)
		if a == b {
			if why, ok := treeDifferences[s.name]; ok {
				t.Errorf("%s: listed as differing (%s) but the trees agree", s.name, why)
			}
			continue
		}
		if _, ok := treeDifferences[s.name]; ok {
			listed[s.name] = true
			continue
		}
		al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
		for i := range al {
			if i >= len(bl) || al[i] != bl[i] {
				lo := max(0, i-8)
				t.Errorf("%s: trees differ at dump line %d:\ngopher-lua:\n%s\nours:\n%s", s.name, i,
					strings.Join(al[lo:min(i+3, len(al))], "\n"), strings.Join(bl[lo:min(i+3, len(bl))], "\n"))
				break
			}
		}
	}
	if compared < 150 {
		t.Errorf("compared only %d trees", compared)
	}
	for name := range treeDifferences {
		if !listed[name] && (name != "math.lua" || len(gopherLuaSuite(t)) > 0) {
			t.Errorf("%s is listed as differing but was not compared", name)
		}
	}
	t.Logf("compared %d trees; %d sources gopher-lua takes are refused", compared, len(refused))
	if len(refused) < 10 {
		t.Errorf("only %d sources that gopher-lua takes are refused", len(refused))
	}
	srcs := make([]string, len(refused))
	for i, s := range refused {
		srcs[i] = s.src
	}
	for i, want := range loadErrorsLua51(t, srcs) {
		if messages[i] != want {
			t.Errorf("%s: we refuse it with %q, lua5.1 says %q", trim(refused[i].name), messages[i], want)
		}
	}
}

// syntaxGen writes random valid Lua 5.1: every statement and expression
// form, operators mixed at random, and line breaks between tokens (never
// before a call's '(', which lua5.1 calls ambiguous).
type syntaxGen struct {
	rng    *rand.Rand
	b      strings.Builder
	vararg bool
	loop   bool
}

func (g *syntaxGen) sp() {
	switch g.rng.IntN(5) {
	case 0:
		g.b.WriteString("\n")
	case 1:
		g.b.WriteString(" \t")
	default:
		g.b.WriteString(" ")
	}
}

func (g *syntaxGen) w(tokens ...string) {
	for _, t := range tokens {
		g.sp()
		g.b.WriteString(t)
	}
}

var genNames = []string{"a", "b", "x", "t", "f", "self", "n1", "_"} // not goto, which gopher-lua reserves

func (g *syntaxGen) name() string { return genNames[g.rng.IntN(len(genNames))] }

func (g *syntaxGen) literal() {
	lits := []string{"nil", "true", "false", "0", "1", "42", "3.5", ".5", "5.", "1e3", "2E-2", "0x1F", "0XaB",
		"'s'", `"d\"q"`, `'\65\t\n\\'`, "[[long]]", "[==[\n]]x]==]", `"\z"`, `'\x'`}
	g.w(lits[g.rng.IntN(len(lits))])
}

func (g *syntaxGen) args(d int) {
	switch g.rng.IntN(4) {
	case 0:
		g.w("'str'")
	case 1:
		g.table(d)
	default:
		g.b.WriteString(" (") // no line break before '('

		g.exprList(d)
		g.w(")")
	}
}

func (g *syntaxGen) exprList(d int) {
	n := g.rng.IntN(3)
	for i := 0; i < n; i++ {
		if i > 0 {
			g.w(",")
		}
		g.expr(d)
	}
}

func (g *syntaxGen) table(d int) {
	g.w("{")
	n := g.rng.IntN(4)
	for i := 0; i < n; i++ {
		switch g.rng.IntN(3) {
		case 0:
			g.w(g.name(), "=")
			g.expr(d)
		case 1:
			g.w("[")
			g.expr(d)
			g.w("]", "=")
			g.expr(d)
		default:
			g.expr(d)
		}
		if i < n-1 || g.rng.IntN(2) == 0 {
			g.w([]string{",", ";"}[g.rng.IntN(2)])
		}
	}
	g.w("}")
}

// prefix writes a name or parenthesised expression with suffixes; with
// wantVar, one that can be assigned and does not start with '(' (which
// would continue the statement before).
func (g *syntaxGen) prefix(d int, wantVar bool) {
	if g.rng.IntN(4) == 0 && d > 0 && !wantVar {
		g.w("(")
		g.expr(d - 1)
		g.w(")")
	} else {
		g.w(g.name())
	}
	for n := g.rng.IntN(3); n > 0 && d > 0; n-- {
		switch g.rng.IntN(4) {
		case 0:
			g.w(".", g.name())
		case 1:
			g.w("[")
			g.expr(d - 1)
			g.w("]")
		case 2:
			g.w(":", g.name())
			g.args(d - 1)
		default:
			g.args(d - 1)
		}
	}
	if wantVar && g.rng.IntN(2) == 0 {
		g.w(".", g.name())
	} else if wantVar {
		g.w("[")
		g.expr(d - 1)
		g.w("]")
	}
}

var genBinops = []string{"+", "-", "*", "/", "%", "^", "..", "==", "~=", "<", "<=", ">", ">=", "and", "or"}

func (g *syntaxGen) expr(d int) {
	if d <= 0 {
		if g.vararg && g.rng.IntN(8) == 0 {
			g.w("...")
			return
		}
		g.literal()
		return
	}
	switch g.rng.IntN(9) {
	case 0, 1:
		g.expr(d - 1)
		g.w(genBinops[g.rng.IntN(len(genBinops))])
		g.expr(d - 1)
	case 2:
		g.w([]string{"-", "not", "#"}[g.rng.IntN(3)])
		g.expr(d - 1)
	case 3:
		g.w("(")
		g.expr(d - 1)
		g.w(")")
	case 4:
		g.prefix(d-1, false)
	case 5:
		g.table(d - 1)
	case 6:
		g.function(d - 1)
	default:
		g.expr(0)
	}
}

func (g *syntaxGen) function(d int) {
	g.w("function")
	g.body(d)
}

// params writes a parameter list and sets whether the function is vararg;
// body puts back the enclosing function's state.
func (g *syntaxGen) params() {
	g.w("(")
	g.vararg = false
	switch g.rng.IntN(4) {
	case 1:
		g.w("p")
	case 2:
		g.w("p", ",", "q", ",", "...")
		g.vararg = true
	case 3:
		g.w("...")
		g.vararg = true
	}
	g.w(")")
}

// body writes a function's parameters, block and end, restoring the
// enclosing function's vararg and loop state.
func (g *syntaxGen) body(d int) {
	vararg, loop := g.vararg, g.loop
	g.params()
	g.loop = false
	g.block(d)
	g.w("end")
	g.vararg, g.loop = vararg, loop
}

func (g *syntaxGen) block(d int) {
	for n := g.rng.IntN(4); n > 0; n-- {
		g.stmt(d)
		if g.rng.IntN(3) == 0 {
			g.w(";")
		}
	}
	switch g.rng.IntN(5) {
	case 0:
		g.w("return")
		g.exprList(d)
	case 1:
		if g.loop {
			g.w("break")
		}
	}
}

func (g *syntaxGen) loopBody(d int) {
	loop := g.loop
	g.loop = true
	g.block(d)
	g.loop = loop
}

func (g *syntaxGen) stmt(d int) {
	if d <= 0 {
		g.w("x", "=")
		g.expr(0)
		return
	}
	switch g.rng.IntN(12) {
	case 0:
		g.prefix(d-1, true)
		if g.rng.IntN(2) == 0 {
			g.w(",")
			g.prefix(d-1, true)
		}
		g.w("=")
		g.expr(d - 1)
		for n := g.rng.IntN(2); n > 0; n-- {
			g.w(",")
			g.expr(d - 1)
		}
	case 1:
		g.w("local", g.name())
		if g.rng.IntN(2) == 0 {
			g.w(",", g.name())
		}
		if g.rng.IntN(3) > 0 {
			g.w("=")
			g.expr(d - 1)
		}
	case 2:
		g.w(g.name(), ":", g.name())
		g.args(d - 1)
	case 3:
		g.w("do")
		g.block(d - 1)
		g.w("end")
	case 4:
		g.w("while")
		g.expr(d - 1)
		g.w("do")
		g.loopBody(d - 1)
		g.w("end")
	case 5:
		g.w("repeat")
		g.loopBody(d - 1)
		g.w("until")
		g.expr(d - 1)
	case 6:
		g.w("if")
		g.expr(d - 1)
		g.w("then")
		g.block(d - 1)
		for n := g.rng.IntN(3); n > 0; n-- {
			g.w("elseif")
			g.expr(d - 1)
			g.w("then")
			g.block(d - 1)
		}
		if g.rng.IntN(2) == 0 {
			g.w("else")
			g.block(d - 1)
		}
		g.w("end")
	case 7:
		g.w("for", "i", "=")
		g.expr(d - 1)
		g.w(",")
		g.expr(d - 1)
		if g.rng.IntN(2) == 0 {
			g.w(",")
			g.expr(d - 1)
		}
		g.w("do")
		g.loopBody(d - 1)
		g.w("end")
	case 8:
		g.w("for", "k", ",", "v", "in")
		g.expr(d - 1)
		g.w("do")
		g.loopBody(d - 1)
		g.w("end")
	case 9:
		g.w("function", g.name())
		for n := g.rng.IntN(3); n > 0; n-- {
			g.w(".", g.name())
		}
		if g.rng.IntN(2) == 0 {
			g.w(":", g.name())
		}
		g.body(d - 1)
	case 10:
		g.w("local", "function", g.name())
		g.body(d - 1)
	default:
		g.w("f")
		g.args(d - 1)
	}
}

func TestParserBuildsGopherLuaTreesForGeneratedSources(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 13))
	compared := 0
	for i := 0; i < 600; i++ {
		g := &syntaxGen{rng: rng, vararg: true}
		g.block(4)
		src := g.b.String()
		want, werr := parse.Parse(strings.NewReader(src), "x")
		got, gerr := ParseBytes([]byte(src), src, StringLevels)
		if gerr != nil {
			t.Errorf("refused the generated source (%v):\n%s", gerr, src)
			continue
		}
		if werr != nil {
			continue // gopher-lua refuses some valid Lua 5.1 (\v, \f)
		}
		compared++
		if a, b := dumpTree(want), dumpTree(got); a != b {
			t.Errorf("trees differ for\n%s\ngopher-lua:\n%s\nours:\n%s", src, a, b)
			break
		}
	}
	if compared < 500 {
		t.Errorf("compared only %d trees", compared)
	}
}
