package luafuzz

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Program is one generated Lua 5.1 program.
type Program struct {
	Seed uint64
	root *node
	// sections names, in order, the feature each numbered section of the
	// program exercises; the program prints "#N" as it enters section N,
	// so a difference in output is placed in the section it starts in.
	sections []string
}

// Source is the program's text as it is now (less what a shrinker cut).
func (p *Program) Source() string { return p.root.String() }

// Section is the feature of section n (1-based), or "" for the prelude.
func (p *Program) Section(n int) string {
	if n < 1 || n > len(p.sections) {
		return ""
	}
	return p.sections[n-1]
}

// prelude defines what every program may use: ways to print any value
// without an address (show), every value of a call (showall), and a table's
// contents in a fixed order (dump), since pairs() order is not Lua's to
// promise.
const prelude = `local function show(v)
  local t = type(v)
  if t == "table" or t == "function" or t == "thread" or t == "userdata" then return t end
  return tostring(v)
end
local function showall(...)
  local out = {}
  for i = 1, select("#", ...) do out[i] = show((select(i, ...))) end
  return select("#", ...) .. ":" .. table.concat(out, ",")
end
local function keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  -- pairs' order, which Lua leaves open, decides the sort's comparisons:
  -- a hook would count them
  local hook, mask, count = debug.gethook()
  debug.sethook()
  table.sort(ks, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == "number" or ta == "string" then return a < b end
    return tostring(a) < tostring(b)
  end)
  debug.sethook(hook, mask, count)
  return ks
end
local function dump(t)
  if type(t) ~= "table" then return show(t) end
  local out = {}
  for _, k in ipairs(keys(t)) do out[#out + 1] = show(k) .. "=" .. show(t[k]) end
  return "{" .. table.concat(out, ",") .. "}"
end
local function id(...) return ... end
`

// features are the kinds of section a program is made of, with the
// function that writes one.
var features = []struct {
	name  string
	write func(g *gen) []*node
}{
	{"calls", (*gen).calls},
	{"genfor", (*gen).genericFor},
	{"numfor", (*gen).numericFor},
	{"closures", (*gen).closures},
	{"varargs", (*gen).varargs},
	{"andor.local", (*gen).andOrLocal},
	{"andor.upvalue", (*gen).andOrUpvalue},
	{"andor.field", (*gen).andOrField},
	{"andor.global", (*gen).andOrGlobal},
	{"andor.multi", (*gen).andOrMulti},
	{"meta.index", (*gen).metaIndex},
	{"meta.call", (*gen).metaCall},
	{"meta.arith", (*gen).metaArith},
	{"meta.compare", (*gen).metaCompare},
	{"meta.concat", (*gen).metaConcat},
	{"string.find", (*gen).stringFind},
	{"string.gmatch", (*gen).stringGmatch},
	{"string.gsub", (*gen).stringGsub},
	{"string.format", (*gen).stringFormat},
	{"string.misc", (*gen).stringMisc},
	{"arith", (*gen).arith},
	{"arith.mod", (*gen).arithMod},
	{"arith.pow", (*gen).arithPow},
	{"arith.math", (*gen).arithMath},
	{"arith.zero", (*gen).arithZero},
	{"errors", (*gen).errors},
	{"coroutines", (*gen).coroutines},
	{"many.locals", (*gen).manyLocals},
	{"many.args", (*gen).manyArgs},
	{"many.literals", (*gen).manyLiterals},
	{"coercion", (*gen).coercion},
	{"loops", (*gen).loops},
	{"recursion", (*gen).recursion},
	{"tables", (*gen).tables},
	{"debug.levels", (*gen).debugLevels},
	{"hooks", (*gen).hooks},
}

// Generate writes the program of a seed: the same seed, the same program.
func Generate(seed uint64) *Program {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x6c7561))}
	p := &Program{Seed: seed}
	stmts := []*node{{kind: text, parts: []any{prelude}}}
	n := 3 + g.r.IntN(6)
	for i := 1; i <= n; i++ {
		f := features[g.r.IntN(len(features))]
		p.sections = append(p.sections, f.name)
		stmts = append(stmts, &node{kind: text, parts: []any{fmt.Sprintf("print(\"#%d\")", i)}})
		g.nums, g.strs = nil, nil
		body := f.write(g)
		// A section is a block of its own so that its locals end with it;
		// a few run at the top level, to share the chunk's registers.
		if g.r.IntN(4) > 0 {
			stmts = append(stmts, mk(stmt, "do\n%s end", block(body)))
		} else {
			stmts = append(stmts, body...)
		}
	}
	if g.r.IntN(8) == 0 {
		p.sections = append(p.sections, "uncaught")
		stmts = append(stmts, &node{kind: text, parts: []any{fmt.Sprintf("print(\"#%d\")", n+1)}})
		stmts = append(stmts, g.uncaught())
	}
	p.root = block(stmts)
	return p
}

// gen holds the random source and the names in scope of the section being
// written: numeric and string locals an expression may read.
type gen struct {
	r     *rand.Rand
	nums  []string
	strs  []string
	names int
}

func (g *gen) name(prefix string) string {
	g.names++
	return prefix + strconv.Itoa(g.names)
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) chance(n int) bool { return g.r.IntN(n) == 0 }

// Number literals, edges first.
var numLits = []string{"0", "1", "2", "3", "-1", "7", "10", "0.5", "-2.5", "1e308", "2^53", "(2^53 + 1)",
	"(-2^63)", "(1/0)", "(-1/0)", "0.1", "255", "256", "1e-300", "3.75", "-id(0)", "100", "12", "0x10", "1e15", "123456789012"}

func (g *gen) numLit() *node {
	return lit(g.pick(numLits...))
}

// num is a numeric expression at most depth deep.
func (g *gen) num(depth int) *node {
	if depth <= 0 || g.chance(3) {
		switch {
		case len(g.nums) > 0 && g.chance(2):
			return lit(g.pick(g.nums...))
		default:
			return g.numLit()
		}
	}
	a, b := g.num(depth-1), g.num(depth-1)
	switch g.r.IntN(12) {
	case 0, 1:
		return mk(expr, "(%s + %s)", a, b)
	case 2:
		return mk(expr, "(%s - %s)", a, b)
	case 3:
		return mk(expr, "(%s * %s)", a, b)
	case 4:
		return mk(expr, "(%s / %s)", a, b)
	case 5:
		return mk(expr, "(%s %% %s)", a, b)
	case 6:
		return mk(expr, "(- %s)", a)
	case 7:
		return mk(expr, "id(%s)", a)
	case 8:
		return mk(expr, "math.floor(%s)", a)
	case 9:
		return mk(expr, "#%s", g.str(depth-1))
	case 10:
		return mk(expr, "math.max(%s, %s)", a, b)
	default:
		return mk(expr, "(tonumber(%s) or 0)", g.str(depth-1))
	}
}

var strLits = []string{`""`, `"a"`, `"abc"`, `"hello world"`, `"10"`, `"0x1F"`, `" 5 "`, `"1e2"`, `"x.y"`,
	`"a,b,,c"`, `"%d"`, `"[x]"`, `"\0z"`, `"THE end"`, `"key=val; k2=v2"`, `"12ab34"`}

// str is a string expression at most depth deep.
func (g *gen) str(depth int) *node {
	if depth <= 0 || g.chance(3) {
		if len(g.strs) > 0 && g.chance(2) {
			return lit(g.pick(g.strs...))
		}
		return lit(g.pick(strLits...))
	}
	a := g.str(depth - 1)
	switch g.r.IntN(7) {
	case 0, 1:
		return mk(expr, "(%s .. %s)", a, g.str(depth-1))
	case 2:
		return mk(expr, "tostring(%s)", g.num(depth-1))
	case 3:
		return mk(expr, "(%s):upper()", a)
	case 4:
		return mk(expr, "string.sub(%s, %s, %s)", a, g.smallInt(), g.smallInt())
	case 5:
		return mk(expr, "string.rep(%s, %s)", a, g.pick("0", "1", "2", "3"))
	default:
		return mk(expr, "(%s .. %s)", a, g.num(depth-1))
	}
}

func (g *gen) smallInt() *node {
	return lit(g.pick("-3", "-1", "0", "1", "2", "3", "5", "10", "100"))
}

// intArg is an integer argument for a library function: mostly a small
// one, sometimes one past C's int, NaN or an infinity, which Lua 5.1 reads
// as a 64-bit integer or, cut to its low 32 bits, as a C int. Each of
// these is small either way, so that no count runs long in lua5.1.
func (g *gen) intArg() *node {
	if g.r.IntN(4) > 0 {
		return g.smallInt()
	}
	return lit(g.pick("2^32 + 2", "-2^32 + 3", "2^32 - 1", "2^53", "-2^53", "0/0", "1/0", "-1/0", "2^63", "2^40 + 1", "1e300"))
}

// tablePos is a position in a table of three elements, or one next to it,
// as Lua 5.1 reads it (a C int), written as a wide number or not.
func (g *gen) tablePos() *node {
	return lit(g.pick("-1", "0", "1", "2", "3", "4", "2^32 + 2", "-2^32 + 3", "2^32 - 1", "2^53", "0/0", "1/0", "2^40 + 1"))
}

// any is an expression of any type, falsy ones included: the operands of
// and/or.
func (g *gen) any(depth int) *node {
	switch g.r.IntN(8) {
	case 0:
		return lit(g.pick("nil", "false", "true"))
	case 1:
		return g.str(depth)
	case 2, 3:
		return g.num(depth)
	case 4:
		return mk(expr, "id(%s)", g.any(depth-1))
	default:
		if depth <= 0 {
			return lit(g.pick("nil", "false", "0", `"s"`))
		}
		op := g.pick("and", "or")
		return mk(expr, "(%s "+op+" %s)", g.any(depth-1), g.any(depth-1))
	}
}

// show prints values through show(), one print per statement.
func printShow(args ...*node) *node {
	fs := make([]string, len(args))
	as := make([]any, len(args))
	for i, a := range args {
		fs[i] = "show(%s)"
		as[i] = a
	}
	return mk(stmt, "print("+strings.Join(fs, ", ")+")", as...)
}

// pcallPrint prints what pcall of a function returning e gives: an error
// in e is a line of output, not the end of the program.
func pcallPrint(e *node) *node {
	return mk(stmt, "print(showall(pcall(function() return %s end)))", e)
}

func (g *gen) localNum() (string, *node) {
	v := g.name("n")
	s := mk(stmt, "local "+v+" = %s", g.num(2))
	g.nums = append(g.nums, v)
	return v, s
}

func (g *gen) localStr() (string, *node) {
	v := g.name("s")
	s := mk(stmt, "local "+v+" = %s", g.str(2))
	g.strs = append(g.strs, v)
	return v, s
}

// uncaught ends a program with an error no pcall catches, so that the
// message and exit status are compared too.
func (g *gen) uncaught() *node {
	switch g.r.IntN(5) {
	case 0:
		return mk(stmt, "error(%s)", g.str(1))
	case 1:
		return mk(stmt, "error(%s, "+g.pick("0", "1", "2")+")", g.str(1))
	case 2:
		return mk(stmt, "local t = nil; print(t.x)")
	case 3:
		return mk(stmt, "error({code = 1})")
	default:
		return mk(stmt, "local f = function(x) return x + {} end; f(%s)", g.num(1))
	}
}
