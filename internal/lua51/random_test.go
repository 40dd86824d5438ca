package lua51

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

func TestSeededMathRandomRepeatsLua51Sequence(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "seed 42", src: `math.randomseed(42) print(math.random(1, 1e6), math.random(), math.random(10))`,
			want: "33470\t0.32996420763897\t7"},
		{name: "reseeding restarts the sequence", src: `
math.randomseed(7) local a = {math.random(100), math.random(100), math.random(100)}
math.randomseed(7) local b = {math.random(100), math.random(100), math.random(100)}
print(a[1] == b[1] and a[2] == b[2] and a[3] == b[3], a[1], a[2], a[3])`,
			want: "true\t49\t87\t60"},
		{name: "seeds are truncated to an int, 0 is 1", src: `
math.randomseed(1.9) local a = math.random(1000)
math.randomseed(1) local b = math.random(1000)
math.randomseed(0) local c = math.random(1000)
math.randomseed(-5) print(a, b, c, math.random(1000))`,
			want: "841\t841\t841\t685"},
		{name: "arguments are truncated", src: `math.randomseed(3) print(math.random(1.9), math.random(2.9, 3.9), math.random(-3, -3))`,
			want: "1\t2\t-3"},
		{name: "a real in [0, 1) without arguments", src: `
math.randomseed(11) local ok = true
for i = 1, 1000 do local x = math.random() if x < 0 or x >= 1 or x % 1 ~= x then ok = false end end
print(ok)`, want: "true"},
	})
}

func TestMathRandomChecksItsArguments(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "empty intervals and extra arguments", src: `
print(pcall(function() return math.random(0) end))
print(pcall(function() return math.random(3, 1) end))
print(pcall(function() return math.random(1, 2, 3) end))
print((pcall(function() return math.random("x") end)))
print((pcall(function() math.randomseed() end)))`,
			want: "false\tstdin:2: bad argument #1 to 'random' (interval is empty)\n" +
				"false\tstdin:3: bad argument #2 to 'random' (interval is empty)\n" +
				"false\tstdin:4: wrong number of arguments\nfalse\nfalse"},
	})
}

// Each state draws from its own generator: seeding one runtime leaves
// another's sequence alone, and unseeded states start apart.
func TestEachStateHasItsOwnRandomGenerator(t *testing.T) {
	a, b := newState(t), newState(t)
	draw := `math.randomseed(42) local x = math.random(1, 1e6) print(x)`
	if got := runIn(t, a, draw, plainPCall); got != "33470" {
		t.Fatalf("seeded draw gave %s, Lua 5.1 gives 33470", got)
	}
	// Seeding b between two draws of a must not move a's sequence.
	seq := func(L *lua.LState) string {
		return runIn(t, L, `local t = {} for i = 1, 5 do t[i] = math.random(1, 1e6) end print(table.concat(t, " "))`, plainPCall)
	}
	runIn(t, a, `math.randomseed(9)`, plainPCall)
	first := seq(a)
	runIn(t, a, `math.randomseed(9)`, plainPCall)
	runIn(t, b, `math.randomseed(9) math.random() math.random()`, plainPCall)
	if again := seq(a); again != first {
		t.Errorf("seeding and drawing in another state changed this one's sequence: %s, then %s", first, again)
	}
	// Unseeded states differ (a chance of 1 in 10^30 of a false failure).
	c, d := newState(t), newState(t)
	if x, y := seq(c), seq(d); x == y {
		t.Errorf("two unseeded states drew the same numbers: %s", x)
	}
}

func plainPCall(L *lua.LState) error { return PCall(L, 0, lua.MultRet, nil) }
