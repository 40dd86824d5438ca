package luac

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// listLiteral is a constructor of n numbers, each distinct: i + 0.5.
func listLiteral(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d.5,", i)
	}
	b.WriteString("}")
	return b.String()
}

func TestBigListLiteralKeepsEveryItem(t *testing.T) {
	src := "local t = " + listLiteral(40000) + "\nreturn #t, t[25550], t[25551], t[30000], t[40000], t[40001]"
	got := runLuac(t, "print((function() "+src+" end)())")
	if want := "40000\t25550.5\t25551.5\t30000.5\t40000.5\tnil"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestNestedBigLiteralKeepsItsPlaceInTheParent(t *testing.T) {
	src := "x = {first = 1, data = " + listLiteral(40000) + ", last = 2, " + strings.Trim(listLiteral(3), "{}") + "}\n" +
		"print(x.first, #x.data, x.data[40000], x.last, #x, x[3])"
	if got, want := runLuac(t, src), "1\t40000\t40000.5\t2\t3\t3.5"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBigLiteralEndingInACallKeepsAllItsValues(t *testing.T) {
	src := "local function three() return 'a', nil, 'c' end\n" +
		"local function f(...) return " + strings.TrimSuffix(listLiteral(30000), "}") + " ..., three() } end\n" +
		"local t = f(7, 8)\nprint(t[30000], t[30001], t[30002], t[30003], t[30004], t[30005])"
	if got, want := runLuac(t, src), "30000.5\t7\ta\tnil\tc\tnil"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// gopher-lua's own compiler stores a full batch of 50 items a second time
// after a keyed field, from registers the field has overwritten.
func TestKeyedFieldAfterFiftyItemsLeavesThemAlone(t *testing.T) {
	items := strings.Trim(listLiteral(50), "{}")
	src := "local function f() return 'key' end\nlocal t = {" + items + " [f()] = 'v', x = 9}\n" +
		"print(#t, t[1], t[50], t.key, t.x)"
	if got, want := runLuac(t, src), "50\t1.5\t50.5\tv\t9"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A function may hold any number of constants, in any mix of list items,
// keyed fields and statements: past 256 they are loaded into registers,
// and each constant is found in a map, not among the others one by one.
func TestThousandsOfConstantsCompileAndRun(t *testing.T) {
	var rows strings.Builder
	rows.WriteString("local data = {}\n")
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&rows, "data[%d] = {%d.25, %d.75, 'r%d'}\n", i+1, i, i, i)
	}
	rows.WriteString("print(#data, data[1][1], data[20000][2], data[20000][3])")
	var keyed strings.Builder
	keyed.WriteString("local k = {")
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&keyed, "k%d = %d.5, ['s%d'] = %d,\n", i, i, i, i)
	}
	keyed.WriteString("}\nprint(k.k0, k.k19999, k.s19999)")
	for _, tc := range []struct{ name, src, want string }{
		{"list", "local t = " + listLiteral(100000) + "\nprint(#t, t[300], t[100000])", "100000\t300.5\t100000.5"},
		{"keyed", keyed.String(), "0.5\t19999.5\t19999"},
		{"rows as fields", "local t = {" + strings.Repeat("{1.5, 'x', 3.5},\n", 20000) + "}\nprint(#t, t[20000][2])", "20000\tx"},
		{"rows as commands", rows.String(), "20000\t0.25\t19999.75\tr19999"},
	} {
		if got := runLuac(t, tc.src); got != tc.want {
			t.Errorf("%s: printed %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Loading is linear in the literal's size: ten times the items take about
// ten times as long (a quadratic compile took a hundred times as long, and
// 20 s for 100,000 items). Ratios of the fastest of five loads, so that a
// busy machine slows both sides alike; the absolute bound is loose for the
// same reason (0.12 s on the development machine).
func TestLoadingIsLinearInTheLiteralsSize(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	load := func(n int) time.Duration {
		src := "return " + listLiteral(n)
		best := time.Duration(1 << 62)
		for range 5 {
			// The last round's table and code are garbage now: collect
			// them here rather than inside the load being timed.
			runtime.GC()
			start := time.Now()
			fn, err := LoadString(L, src, "big")
			if err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
			L.Push(fn)
			if err := L.PCall(0, 1, nil); err != nil {
				t.Fatal(err)
			}
			if got := L.Get(-1).(*lua.LTable).Len(); got != n {
				t.Fatalf("#t = %d, want %d", got, n)
			}
			L.Pop(1)
		}
		return best
	}
	small, big := load(10000), load(100000)
	t.Logf("10,000 items: %v; 100,000 items: %v", small, big)
	if big > 25*small {
		t.Errorf("ten times the items took %.0f times as long", float64(big)/float64(small))
	}
	if big > 2*time.Second && !raceEnabled {
		t.Errorf("100,000 items took %v", big)
	}
}

// constructorPrelude logs the order in which fields are evaluated and prints
// a table's contents in a fixed order.
const constructorPrelude = `
local log = {}
local function v(x) log[#log + 1] = tostring(x) return x end
local function mv(...) log[#log + 1] = "mv" return ... end
local function show(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) ~= type(b) then return type(a) < type(b) end
    return a < b
  end)
  local out = {}
  for _, k in ipairs(keys) do out[#out + 1] = tostring(k) .. "=" .. tostring(t[k]) end
  local order = table.concat(log, ",")
  log = {}
  return table.concat(out, " ") .. " | " .. order
end
`

// randomConstructor is a constructor of list items, keyed fields whose keys
// may repeat an item's index, nils, calls and `...`.
func randomConstructor(rng *rand.Rand) string {
	n := rng.IntN(8)
	if rng.IntN(3) == 0 {
		n = 45 + rng.IntN(70) // across batches of 50
	}
	var fields []string
	for i := 0; i < n; i++ {
		switch rng.IntN(9) {
		case 0, 1:
			fields = append(fields, fmt.Sprintf("v(%d)", rng.IntN(1000)))
		case 2:
			fields = append(fields, fmt.Sprintf("%d.5", rng.IntN(1000)))
		case 3:
			fields = append(fields, "nil")
		case 4:
			fields = append(fields, fmt.Sprintf("[v(%d)] = v('k%d')", 1+rng.IntN(120), i))
		case 5:
			fields = append(fields, fmt.Sprintf("f%d = '%d'", rng.IntN(5), i))
		case 6:
			fields = append(fields, "(mv(1, 2))")
		case 7:
			fields = append(fields, "mv(3, 4)") // one value unless last
		default:
			fields = append(fields, "...")
		}
	}
	switch rng.IntN(4) {
	case 0:
		fields = append(fields, "mv('a', nil, 'c', nil)")
	case 1:
		fields = append(fields, "...")
	}
	sep := []string{", ", "; "}[rng.IntN(2)]
	return "{" + strings.Join(fields, sep) + "}"
}

func TestConstructorsBuildWhatLua51Builds(t *testing.T) {
	runLua51(t, "")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var src strings.Builder
	src.WriteString(constructorPrelude)
	const programs = 150
	for i := 0; i < programs; i++ {
		fmt.Fprintf(&src, "print(show((function(...) return %s end)(%d, nil, 'z')))\n", randomConstructor(rng), i)
	}
	want := runLua51(t, src.String())
	got := runLuac(t, src.String())
	if got == want {
		return
	}
	gotLines, wantLines := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(gotLines), len(wantLines)) {
		if gotLines[i] != wantLines[i] {
			t.Fatalf("constructor %d:\ngot  %s\nwant %s", i+1, gotLines[i], wantLines[i])
		}
	}
	t.Fatalf("printed %d lines, lua5.1 %d", len(gotLines), len(wantLines))
}

// A function declaring `...` gets a local arg; a constructor using both
// `...` and another arg (the script's, in the main chunk) sees each, at any
// size.
func TestConstructorsUsingVarargsAndArgSeeBoth(t *testing.T) {
	src := "local arg = 'outer'\nlocal t = {1, arg, select('#', ...), 2, ...}\nprint(#t, t[2], t[3])"
	if got, want := runLuac(t, src), "4\touter\t0"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	big := "local arg = 'outer'\nlocal t = {arg, select('#', ...), " + strings.Trim(listLiteral(30000), "{}") + " ...}\n" +
		"print(t[1], t[2], t[3], #t)"
	if got, want := runLuac(t, big), "outer\t0\t1.5\t30002"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestConstructorErrorsPointAtTheItemsLine(t *testing.T) {
	src := "local t = {\n1,\n2,\nnil + 1,\n}"
	L := lua.NewState()
	defer L.Close()
	fn, err := LoadString(L, src, "=lines")
	if err != nil {
		t.Fatal(err)
	}
	L.Push(fn)
	err = L.PCall(0, 0, nil)
	if err == nil || !strings.Contains(err.Error(), "lines:4:") {
		t.Errorf("error %v, want one at lines:4", err)
	}
}

// `return {...}` is a plain return of one table, not a tail call that
// could return more.
func TestConstructorIsOneValue(t *testing.T) {
	src := "local function f() return {1, 2, 3} end\nprint(select('#', f()), #f())"
	if got, want := runLuac(t, src), "1\t3"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// groupedProgram is one function with thousands of literals and every kind
// of statement, each printing what it saw, so that lua5.1's output checks
// the compiled code.
func groupedProgram(rng *rand.Rand) string {
	var b strings.Builder
	b.WriteString("local arg = 'script args'\nlocal acc, log = 0, {}\nlocal function note(x) log[#log + 1] = tostring(x) end\n")
	b.WriteString("local function body(...)\n  local here = 0\n")
	locals := 0
	for i := 0; i < 9000; i++ {
		op := rng.IntN(12)
		if op == 4 {
			if locals++; locals > 60 {
				op = 3 // a function may have 200 locals
			}
		}
		switch op {
		case 0, 1, 2:
			fmt.Fprintf(&b, "  acc = acc + %d.5\n", i)
		case 3:
			fmt.Fprintf(&b, "  here = here + %d\n", rng.IntN(10))
		case 4:
			fmt.Fprintf(&b, "  local v%d = %d.25; acc = acc + v%d\n", i, i, i)
		case 5:
			fmt.Fprintf(&b, "  for j = 1, 3 do if j == %d then break end acc = acc + j end\n", 1+rng.IntN(3))
		case 6:
			b.WriteString("  note(select('#', ...))\n")
		case 7:
			b.WriteString("  note(arg)\n")
		case 8:
			b.WriteString("  note(arg); note(select('#', ...))\n")
		case 9:
			fmt.Fprintf(&b, "  do local t = {%d, 'x%d', here} acc = acc + t[1] + #t end\n", i, i)
		case 10:
			fmt.Fprintf(&b, "  function g%d() return here + %d end note(g%d())\n", i%7, i, i%7)
		default:
			fmt.Fprintf(&b, "  if acc > %d then note('over %d') end\n", rng.IntN(100000), i)
		}
	}
	b.WriteString("  return here, acc\nend\n")
	b.WriteString("local here, total = body(1, nil, 3)\nprint(here, string.format('%.2f', total), #log, table.concat(log, ',', #log - 50, #log))\n")
	return b.String()
}

func TestLongFunctionsRunAsLua51Runs(t *testing.T) {
	runLua51(t, "")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
	src := groupedProgram(rng)
	want := runLua51(t, src)
	if got := runLuac(t, src); got != want {
		t.Fatalf("printed %q, lua5.1 prints %q", got, want)
	}
}

// setfenv(1, t) and module("m") act on the function that calls them, found
// by stack level, so a long function's statements all run in it.
func TestStatementsThatSetTheEnvironmentAreNotMoved(t *testing.T) {
	var b strings.Builder
	b.WriteString("local env = setmetatable({}, {__index = _G})\nsetfenv(1, env)\n")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "x%d = %d.5\n", i, i)
	}
	b.WriteString("print(rawget(env, 'x4999'), rawget(_G, 'x4999'))\n")
	src := b.String()
	if got, want := runLuac(t, src), "4999.5\tnil"; got != want {
		t.Errorf("printed %q, want %q: the assignments must land in the new environment", got, want)
	}
}
