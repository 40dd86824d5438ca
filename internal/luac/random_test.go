package luac

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// A randomProgram is one multiple assignment over a mix of locals, globals,
// upvalues and table slots, together with what Lua 5.1's rules say it
// prints: every prefix, key and value is read before any store, and stores
// go right to left.
type randomProgram struct {
	src  string
	want string
}

// slots in the order the program prints them.
var randomSlots = []string{"l1", "l2", "l3", "k", "g1", "g2", "u1", "u2", "t[1]", "t[2]", "t[3]", "t.x"}

// randomTargets adds t[k], whose slot depends on k's value before the
// statement.
var randomTargets = append(append([]string{}, randomSlots...), "t[k]")

type luaValue struct {
	n     int
	isNil bool
}

func (v luaValue) String() string {
	if v.isNil {
		return "nil"
	}
	return strconv.Itoa(v.n)
}

// slotOf resolves a target or read to the slot it names, given the state
// before the statement.
func slotOf(name string, state map[string]luaValue) string {
	if name == "t[k]" {
		return fmt.Sprintf("t[%d]", state["k"].n)
	}
	return name
}

func newRandomProgram(rng *rand.Rand) randomProgram {
	small := func() int { return rng.IntN(101) - 50 }
	state := map[string]luaValue{}
	for _, s := range randomSlots {
		state[s] = luaValue{n: small()}
	}
	state["k"] = luaValue{n: 1 + rng.IntN(3)}

	read := func() (string, int) {
		name := randomTargets[rng.IntN(len(randomTargets))]
		return name, state[slotOf(name, state)].n
	}
	// expr returns Lua source and its value under the old state.
	expr := func() (string, int) {
		switch rng.IntN(4) {
		case 0:
			c := small()
			return fmt.Sprintf("(%d)", c), c
		case 1:
			return read()
		case 2:
			a, av := read()
			b, bv := read()
			return a + " + " + b, av + bv
		default:
			a, av := read()
			b, bv := read()
			return a + " * 2 - " + b, av*2 - bv
		}
	}

	n := 2 + rng.IntN(4)
	targets := make([]string, n)
	for i := range targets {
		targets[i] = randomTargets[rng.IntN(len(randomTargets))]
	}
	nrhs := n + rng.IntN(3) - 1 // one fewer, as many, or one more
	var rhs []string
	var values []luaValue
	for i := 0; i < nrhs; i++ {
		if i == nrhs-1 && rng.IntN(3) == 0 {
			// pair(...) expands to two values only when it comes last.
			a, av := expr()
			b, bv := expr()
			rhs = append(rhs, "pair("+a+", "+b+")")
			values = append(values, luaValue{n: av}, luaValue{n: bv})
			continue
		}
		src, v := expr()
		rhs = append(rhs, src)
		values = append(values, luaValue{n: v})
	}
	for len(values) < n {
		values = append(values, luaValue{isNil: true})
	}

	initial := map[string]luaValue{}
	for s, v := range state {
		initial[s] = v
	}
	slots := make([]string, n)
	for i, target := range targets {
		slots[i] = slotOf(target, state)
	}
	for i := n - 1; i >= 0; i-- {
		state[slots[i]] = values[i]
	}

	// Locals live in run, so u1, u2 and t are its upvalues.
	var b strings.Builder
	fmt.Fprintf(&b, "g1, g2 = %d, %d\n", initial["g1"].n, initial["g2"].n)
	fmt.Fprintf(&b, "local u1, u2 = %d, %d\n", initial["u1"].n, initial["u2"].n)
	fmt.Fprintf(&b, "local t = {%d, %d, %d, x = %d}\n", initial["t[1]"].n, initial["t[2]"].n, initial["t[3]"].n, initial["t.x"].n)
	b.WriteString("local function pair(a, b) return a, b end\n")
	b.WriteString("local function run()\n")
	fmt.Fprintf(&b, "  local l1, l2, l3, k = %d, %d, %d, %d\n", initial["l1"].n, initial["l2"].n, initial["l3"].n, initial["k"].n)
	fmt.Fprintf(&b, "  %s = %s\n", strings.Join(targets, ", "), strings.Join(rhs, ", "))
	b.WriteString("  return l1, l2, l3, k\n")
	b.WriteString("end\n")
	b.WriteString("local l1, l2, l3, k = run()\n")
	b.WriteString("print(" + strings.Join(randomSlots, ", ") + ")\n")

	want := make([]string, len(randomSlots))
	for i, s := range randomSlots {
		want[i] = state[s].String()
	}
	return randomProgram{src: b.String(), want: strings.Join(want, "\t")}
}

func TestRandomMultipleAssignmentsFollowLua51(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	L := lua.NewState()
	defer L.Close()
	for i := 0; i < 300; i++ {
		p := newRandomProgram(rng)
		fn, err := LoadString(L, p.src, "=<string>")
		if err != nil {
			t.Fatalf("LoadString:\n%s\n%v", p.src, err)
		}
		if got := runCaptured(t, L, fn); got != p.want {
			t.Fatalf("program\n%s\nprinted %q, Lua 5.1 rules give %q", p.src, got, p.want)
		}
	}
}
