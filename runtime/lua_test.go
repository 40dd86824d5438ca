package runtime_test

import (
	"strings"
	"testing"

	"github.com/gluaproject/glua/runtime"
)

// Lua 5.1 runs recursion 10,000 deep; gopher-lua's default call stack
// stops at 256.
func TestDeepRecursionRunsAndRunawayRecursionIsCatchable(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	err := rt.DoString(`
		local function depth(n) if n == 0 then return 0 end return 1 + depth(n - 1) end
		assert(depth(10000) == 10000)
		local function forever(n) return 1 + forever(n + 1) end
		local ok, err = pcall(forever, 1)
		assert(not ok and tostring(err):find("overflow"), "pcall gave " .. tostring(err))
		assert(depth(100) == 100, "the runtime works after the overflow")`)
	if err != nil {
		t.Fatal(err)
	}
}

func TestCallDepthIsConfigurable(t *testing.T) {
	rt := newCPU(t, runtime.Options{LuaCallDepth: 500})
	err := rt.DoString(`
		local function depth(n) if n == 0 then return 0 end return 1 + depth(n - 1) end
		assert(depth(400) == 400)
		assert(not pcall(depth, 1000), "1000 calls deep passed a bound of 500")`)
	if err != nil {
		t.Fatal(err)
	}
}

// The value stack grows as a script needs it, up to the configured bound,
// and running past the bound is an error, not a crash.
func TestStackGrowsToItsBoundAndStopsWithAnError(t *testing.T) {
	rt := newCPU(t, runtime.Options{LuaStackSlots: 1 << 16})
	err := rt.DoString(`
		local t = {}
		for i = 1, 50000 do t[i] = i end
		assert(select("#", unpack(t)) == 50000)
		for i = 50001, 100000 do t[i] = i end
		local ok, err = pcall(unpack, t)
		assert(not ok and tostring(err):find("overflow"), "unpack of 100000 gave " .. tostring(err))
		assert(select("#", unpack(t, 1, 10)) == 10, "the runtime works after the overflow")`)
	if err != nil {
		t.Fatal(err)
	}
	err = rt.DoString(`local t = {} for i = 1, 100000 do t[i] = i end return unpack(t)`)
	if err == nil || !strings.Contains(err.Error(), "overflow") {
		t.Fatalf("unpack past the bound at top level: %v", err)
	}
	if err := rt.DoString(`assert(1 + 1 == 2)`); err != nil {
		t.Fatalf("the runtime after an overflow at top level: %v", err)
	}
}

// print writes numbers as Lua 5.1 does ("%.14g"), where gopher-lua's
// would write 0.3333333333333333, 1000000000000000, +Inf and NaN.
func TestPrintWritesNumbersAsLua51(t *testing.T) {
	var out strings.Builder
	rt := newCPU(t, runtime.Options{Stdout: &out})
	if err := rt.DoString(`local zero = 0 print(1/3, 1e15, 2^53, 1/0, -1/0, 0.1, 100, -zero, "text", true)`); err != nil {
		t.Fatal(err)
	}
	want := "0.33333333333333\t1e+15\t9.007199254741e+15\tinf\t-inf\t0.1\t100\t-0\ttext\ttrue\n"
	if out.String() != want {
		t.Errorf("print wrote %q, want %q", out.String(), want)
	}
}
