package runtime_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// randomExpr is a kernel-language expression of v and w, depth levels
// deep, of the operations both backends compute exactly (correctly
// rounded, or selections): + - * / %, negation, math.abs, math.sqrt,
// math.fmod, math.max, math.min and constants of both signs.
func randomExpr(rng *rand.Rand, depth int) string {
	if depth == 0 || rng.IntN(4) == 0 {
		switch rng.IntN(5) {
		case 0:
			return []string{"0", "1", "(-2.5)", "0.1", "3"}[rng.IntN(5)]
		case 1, 2:
			return "v"
		}
		return "w"
	}
	a := randomExpr(rng, depth-1)
	switch rng.IntN(10) {
	case 0:
		return "(-" + a + ")"
	case 1:
		return "math.abs(" + a + ")"
	case 2:
		return "math.sqrt(" + a + ")"
	}
	b := randomExpr(rng, depth-1)
	switch rng.IntN(9) {
	case 0:
		return "math.fmod(" + a + ", " + b + ")"
	case 1:
		return "math.max(" + a + ", " + b + ")"
	case 2:
		return "math.min(" + a + ", " + b + ")"
	case 3:
		return "(" + a + " % " + b + ")"
	}
	return "(" + a + " " + []string{"+", "-", "*", "/"}[rng.IntN(4)] + " " + b + ")"
}

// Random maps of v and w over every pair of NaNs, infinities, zeros and
// numbers, in each float dtype and into float64 and float16 outputs,
// give the same bits on both backends: a random program meets the
// NaN rules (kernels/nan.go) in combinations no listed case names. Where
// a float64 NaN differs, it must be one of the inputs' NaNs, quieted, or
// the NaN made from numbers, as where two NaN operands meet either may
// come out (a float literal such as 0.1 makes float64 work of float32
// elements).
func TestGPURandomMapsGiveTheCPUBackendsBits(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 17))
	var fns []string
	for range 30 {
		fns = append(fns, "function(v, w) return "+randomExpr(rng, 4)+" end")
	}
	src := nanPairs + `
local fns = {` + strings.Join(fns, ",\n") + `}
for _, d in ipairs({ "float32", "float64", "float16", "bfloat16" }) do
  local x, y = cuda.device_array({ n * n }, d), cuda.device_array({ n * n }, d)
  kernels.copy(x, x64)
  kernels.copy(y, y64)
  for k, fn in ipairs(fns) do
    for _, o in ipairs({ d, "float64", "float16" }) do
      local out = cuda.device_array({ n * n }, o)
      kernels.map(fn, out, x, y)
      for e, v in ipairs(out:to_table()) do
        got[#got + 1] = v
        names[#names + 1] = d .. " fn " .. k .. " into " .. o .. " " .. e
      end
      out:free()
    end
  end
end
`
	run := func(rt *runtime.Runtime) ([]float64, []string) {
		setNaNInputs(t, rt)
		return luaNumbers(t, rt, src), luaStrings(t, rt, "names")
	}
	gpu, names := run(newCUDA(t))
	cpu, _ := run(newCPU(t, runtime.Options{}))
	if len(gpu) != len(cpu) {
		t.Fatalf("the GPU gives %d results, the CPU backend %d", len(gpu), len(cpu))
	}
	// the NaNs a result may hold where float64 NaN operands met: an
	// input's, quieted, float32's, or the one made from numbers, as the
	// output's dtype stores them
	candidates := quietNaNs(0xfff8000000000000, 0x7fffffffe0000000)
	either := func(out string, g float64) bool {
		dt, _ := device.ParseDType(out)
		for _, c := range candidates {
			b := make([]byte, dt.Size())
			device.Set(dt, b, 0, math.Float64frombits(c))
			if math.Float64bits(device.Get(dt, b, 0)) == math.Float64bits(g) {
				return true
			}
		}
		return false
	}
	bad, nans := 0, 0
	for i, g := range gpu {
		c := cpu[i]
		if math.Float64bits(g) == math.Float64bits(c) {
			continue
		}
		f := strings.Fields(names[i])
		if g != g && c != c && either(f[4], g) {
			nans++
			continue
		}
		if bad < 10 {
			k := 0
			fmt.Sscan(f[2], &k)
			t.Errorf("%s (%s): GPU %v (%#x), CPU %v (%#x)", names[i], fns[k-1], g, math.Float64bits(g), c, math.Float64bits(c))
		}
		bad++
	}
	if bad > 0 {
		t.Errorf("%d of %d results differ", bad, len(gpu))
	}
	t.Logf("%d results; %d NaNs differ, each one where float64 NaNs met", len(gpu), nans)
}
