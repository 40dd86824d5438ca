package luac

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// progGen writes random Lua 5.1 programs that exercise the compiler:
// and/or/not and comparisons as values and as conditions, into locals,
// upvalues, globals and fields; multiple assignment with calls and side
// effects; varargs and (f()) truncation; every loop with break and
// closures over its variables; generic for over call-bearing iterator
// expressions (`(a .. b):gmatch(p)`, `mk().it(n)`); method calls on
// computed receivers; upvalues of upvalues; constructors mixing items,
// keys and calls. Values stay nil, booleans, small integers and
// strings, so that only the compiled code, not number formatting or a
// library, decides what is printed.
type progGen struct {
	rng   *rand.Rand
	b     strings.Builder
	depth int
	// loop counts the loops the current statement is in (break needs one);
	// vararg says the current function takes `...`.
	loop   int
	vararg bool
	// nums and anys are the numeric and untyped variables in scope.
	nums, anys []string
	fresh      int
}

const progPrelude = `
local out_buf = {}
local function out(...)
  for i = 1, select('#', ...) do out_buf[#out_buf + 1] = tostring((select(i, ...))) end
end
local cnt = 0
local function bump() cnt = cnt + 1 return cnt end
local function id(...) return ... end
local function two(x) return x, x + 1 end
local function none() end
local obj = {k = 10}
function obj:m(x) return x + self.k end
function obj.get() return obj end
local function iter(n) return function(s, i) if i < s then return i + 1, (i + 1) * 2 end end, n, 0 end
local function mk() return {it = iter, obj = obj} end
local function va(...) return select('#', ...), ... end
`

func (g *progGen) pick(list []string) string { return list[g.rng.IntN(len(list))] }

func (g *progGen) num(d int) string {
	if d <= 0 {
		switch g.rng.IntN(4) {
		case 0:
			return strconv.Itoa(g.rng.IntN(7) - 2)
		case 1:
			return "t.a"
		default:
			return g.pick(g.nums)
		}
	}
	switch g.rng.IntN(15) {
	case 0:
		return g.num(d-1) + " + " + g.num(d-1)
	case 1:
		return "(" + g.num(d-1) + " - " + g.num(d-1) + ")"
	case 2:
		return "(" + g.cond(d-1) + " and " + g.num(d-1) + " or " + g.num(d-1) + ")"
	case 3:
		return "(" + g.num(d-1) + " or " + g.num(d-1) + ")"
	case 4:
		return "bump()"
	case 5:
		return "(two(" + g.num(d-1) + "))"
	case 6:
		return "id(" + g.num(d-1) + ", " + g.any(d-1) + ")"
	case 7:
		return "obj:m(" + g.num(d-1) + ")"
	case 8:
		return "obj.get():m(" + g.num(d-1) + ")"
	case 9:
		return "mk().obj:m(" + g.num(d-1) + ")"
	case 10:
		return "t[" + strconv.Itoa(1+g.rng.IntN(3)) + "]"
	case 11:
		va := g.vararg
		g.vararg = false
		inner := g.num(d - 1)
		g.vararg = va
		return "(function(a) return a + " + inner + " end)(" + g.num(d-1) + ")"
	case 12:
		if g.vararg {
			return "select('#', ...)"
		}
		return "select('#', two(1))"
	case 13:
		// An upvalue of an upvalue.
		return "(function() return (function() return " + g.pick(g.nums) + " end)() end)()"
	default:
		return g.num(0)
	}
}

func (g *progGen) any(d int) string {
	if d <= 0 || g.rng.IntN(3) == 0 {
		switch g.rng.IntN(6) {
		case 0:
			return "nil"
		case 1:
			return "false"
		case 2:
			return "true"
		case 3:
			return strconv.Quote(string(rune('a' + g.rng.IntN(3))))
		default:
			return g.pick(g.anys)
		}
	}
	switch g.rng.IntN(11) {
	case 9:
		return "(tostring(" + g.num(d-1) + ") .. 'x'):rep(2)"
	case 10:
		return "select(2, va(" + g.any(d-1) + ", " + g.any(d-1) + "))"
	case 0:
		return "(" + g.any(d-1) + " and " + g.any(d-1) + ")"
	case 1:
		return "(" + g.any(d-1) + " or " + g.any(d-1) + ")"
	case 2:
		return "not " + g.any(d-1)
	case 3:
		return g.cond(d - 1)
	case 4:
		return g.num(d - 1)
	case 5:
		return "tostring(" + g.num(d-1) + ") .. " + strconv.Quote("x") + " .. " + g.num(d-1)
	case 6:
		if g.vararg {
			return "(...)"
		}
		return "(none())"
	case 7:
		return "(" + g.cond(d-1) + " and " + g.any(d-1) + " or " + g.any(d-1) + ")"
	default:
		return "id(" + g.any(d-1) + ")"
	}
}

func (g *progGen) cond(d int) string {
	switch g.rng.IntN(8) {
	case 0:
		return g.num(d) + " < " + g.num(d)
	case 1:
		return g.num(d) + " >= " + g.num(d)
	case 2:
		return "(" + g.any(d) + ") == (" + g.any(d) + ")"
	case 3:
		return "(" + g.any(d) + ") ~= " + g.any(0)
	case 4:
		return "not (" + g.cond(d-1) + ")"
	case 5:
		return "(" + g.cond(d-1) + " and " + g.cond(d-1) + ")"
	case 6:
		return "(" + g.cond(d-1) + " or " + g.any(d-1) + ")"
	default:
		return g.any(d)
	}
}

func (g *progGen) line(format string, args ...any) {
	g.b.WriteString(strings.Repeat("  ", g.depth))
	fmt.Fprintf(&g.b, format, args...)
	g.b.WriteString("\n")
}

func (g *progGen) newName(prefix string) string {
	g.fresh++
	return fmt.Sprintf("%s%d", prefix, g.fresh)
}

// target is something a multiple assignment may store into, and the value
// kind it takes.
func (g *progGen) target() (string, bool) {
	switch g.rng.IntN(6) {
	case 0:
		return "t[" + strconv.Itoa(1+g.rng.IntN(3)) + "]", true
	case 1:
		return "t.a", true
	case 2:
		return "t[" + g.pick(g.nums) + "]", false // any value: never read as a number
	case 3:
		return g.pick(g.anys), false
	default:
		return g.pick(g.nums), true
	}
}

func (g *progGen) block(n, d int) {
	nums, anys := len(g.nums), len(g.anys)
	g.depth++
	for range n {
		g.stmt(d)
	}
	g.depth--
	g.nums, g.anys = g.nums[:nums], g.anys[:anys]
}

func (g *progGen) stmt(d int) {
	// A loop's variables go out of scope with it.
	saved := len(g.nums)
	switch k := g.rng.IntN(16); {
	case k < 3:
		g.line("out(%s, %s)", g.any(2), g.num(2))
	case k == 3:
		name := g.newName("n")
		g.line("local %s = %s", name, g.num(2))
		g.nums = append(g.nums, name)
	case k == 4:
		a, b := g.newName("a"), g.newName("n")
		switch g.rng.IntN(3) {
		case 0:
			g.line("local %s, %s = %s, two(%s)", a, b, g.any(2), g.num(1))
			b2 := g.newName("n")
			g.line("local %s = %s", b2, g.num(1))
			g.nums = append(g.nums, b2)
		case 1:
			g.line("local %s, %s = %s", a, b, g.num(2))
			g.line("%s = %s or 0", b, b)
		default:
			g.line("local %s, %s = %s, %s, bump()", a, b, g.any(2), g.num(2))
		}
		g.anys = append(g.anys, a)
		g.nums = append(g.nums, b)
	case k < 8:
		n := 1 + g.rng.IntN(3)
		var lhs, rhs []string
		for range n {
			tg, isNum := g.target()
			lhs = append(lhs, tg)
			if isNum {
				rhs = append(rhs, g.num(2))
			} else {
				rhs = append(rhs, g.any(2))
			}
		}
		switch g.rng.IntN(4) {
		case 0: // a multi-valued call last: two numbers
			if n > 1 {
				rhs[n-2] = "two(" + g.num(1) + ")"
				rhs = rhs[:n-1]
			}
		case 1: // surplus values, evaluated and dropped
			rhs = append(rhs, "bump()")
		}
		g.line("%s = %s", strings.Join(lhs, ", "), strings.Join(rhs, ", "))
	case k == 8 && d > 0:
		g.line("if %s then", g.cond(2))
		g.block(1+g.rng.IntN(3), d-1)
		if g.rng.IntN(2) == 0 {
			g.line("elseif %s then", g.cond(2))
			g.block(1+g.rng.IntN(2), d-1)
		}
		if g.rng.IntN(2) == 0 {
			g.line("else")
			g.block(1+g.rng.IntN(2), d-1)
		}
		g.line("end")
	case k == 9 && d > 0:
		w := g.newName("w")
		g.line("local %s = 0", w)
		g.line("while %s < 3 and (%s) do", w, g.cond(1))
		g.depth++
		g.line("%s = %s + 1", w, w)
		g.depth--
		g.loop++
		g.block(1+g.rng.IntN(3), d-1)
		g.loop--
		g.line("end")
	case k == 10 && d > 0:
		i := g.newName("i")
		g.line("for %s = %s, %s do", i, g.num(1), strconv.Itoa(g.rng.IntN(4)))
		g.loop++
		g.nums = append(g.nums, i)
		g.depth++
		g.line("fs[#fs + 1] = function() return %s end", i)
		g.depth--
		g.block(1+g.rng.IntN(3), d-1)
		g.loop--
		g.line("end")
		g.nums = g.nums[:saved]
	case k == 11 && d > 0:
		i, v := g.newName("i"), g.newName("v")
		iters := []string{
			"(tostring(" + g.num(1) + ") .. 'ab'):gmatch('()%d()')",
			"iter(" + strconv.Itoa(g.rng.IntN(4)) + ")",
			"mk().it(" + strconv.Itoa(g.rng.IntN(4)) + ")",
			"ipairs({" + g.num(1) + ", " + g.num(1) + "})",
			"id(iter(2))",
			"(mk()).it(bump() % 3)",
		}
		g.line("for %s, %s in %s do", i, v, g.pick(iters))
		g.loop++
		g.nums = append(g.nums, i, v)
		g.depth++
		g.line("fs[#fs + 1] = function() return %s + %s end", i, v)
		g.depth--
		g.block(1+g.rng.IntN(3), d-1)
		g.loop--
		g.line("end")
		g.nums = g.nums[:saved]
	case k == 12 && d > 0:
		r := g.newName("r")
		g.line("local %s = 0", r)
		g.line("repeat")
		g.depth++
		g.line("%s = %s + 1", r, r)
		q := g.newName("q")
		g.line("local %s = %s", q, g.num(1))
		g.line("fs[#fs + 1] = function() return %s end", q)
		g.depth--
		g.loop++
		g.nums = append(g.nums, q)
		g.block(g.rng.IntN(3), d-1)
		g.nums = g.nums[:len(g.nums)-1]
		g.loop--
		g.line("until %s >= 2 or %s", r, "("+q+" > 1)")
	case k == 13 && g.loop > 0:
		g.line("if %s then break end", g.cond(1))
	case k == 14:
		g.line("out(#fs > 0 and fs[#fs]() or 0, select('#', %s))", g.any(1))
	default:
		g.line("do local %s = {%s, %s, k = %s, two(%s)} out(%s[1], %s.k, %s[3], %s[4]) end",
			"c", g.num(1), g.any(1), g.any(1), g.num(1), "c", "c", "c", "c")
	}
}

// program is one whole program: the prelude, outer locals, a vararg body
// function that reads and writes them as upvalues, and the final state.
func (g *progGen) program() string {
	g.b.Reset()
	g.fresh = 0
	g.b.WriteString(progPrelude)
	g.b.WriteString("local n1, n2, n3 = 1, 2, 3\nlocal a1, a2 = nil, 'x'\nlocal t = {a = 1, 5, 6, 7}\nlocal fs = {}\ng1, g2 = 4, 5\n")
	g.b.WriteString("local function body(...)\n")
	g.nums = []string{"n1", "n2", "n3", "g1", "g2"}
	g.anys = []string{"a1", "a2", "g3"}
	g.vararg = true
	g.block(4+g.rng.IntN(8), 2)
	g.b.WriteString("end\n")
	g.b.WriteString("local ok = pcall(body, 1, nil, 'v')\n")
	g.b.WriteString("out(ok, n1, n2, n3, a1, a2, g1, g2, g3, t.a, t[1], t[2], t[3], cnt, #fs)\n")
	g.b.WriteString("print(table.concat(out_buf, ' '))\n")
	return g.b.String()
}

// TestGeneratedProgramsPrintWhatLua51Prints compiles random programs (a
// fixed seed, so that a failure repeats; GLUA_CODEGEN_PROGRAMS and
// GLUA_CODEGEN_SEED run others) and compares their output with lua5.1's.
func TestGeneratedProgramsPrintWhatLua51Prints(t *testing.T) {
	runLua51(t, "")
	count, seed := 300, uint64(30)
	if s := os.Getenv("GLUA_CODEGEN_PROGRAMS"); s != "" {
		count, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("GLUA_CODEGEN_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	g := &progGen{rng: rand.New(rand.NewPCG(seed, seed^0x243f6a8885a308d3))}
	const batch = 50
	for start := 0; start < count; start += batch {
		progs := make([]string, min(batch, count-start))
		var all strings.Builder
		for i := range progs {
			progs[i] = g.program()
			// Each program in a function of its own, with fresh globals.
			all.WriteString("g1, g2, g3 = nil\n(function()\n" + progs[i] + "end)()\n")
		}
		lines := strings.Split(runLua51(t, all.String()), "\n")
		if len(lines) != len(progs) {
			t.Fatalf("lua5.1 printed %d lines for %d programs", len(lines), len(progs))
		}
		for i, src := range progs {
			if got := runLuac(t, "g1, g2, g3 = nil\n"+src); got != lines[i] {
				if dump := os.Getenv("GLUA_CODEGEN_DUMP"); dump != "" {
					os.WriteFile(dump, []byte(src), 0o644)
				}
				t.Fatalf("program %d (seed %d)\n%s\nprinted %q\nlua5.1 prints %q", start+i, seed, src, got, lines[i])
			}
		}
	}
}
