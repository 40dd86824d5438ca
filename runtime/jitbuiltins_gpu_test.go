package runtime_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/runtime"
)

// The kernel language's builtins on the GPU against the CPU evaluator, on
// fresh random data each run (the seed is logged). They skip without a
// GPU, and fail instead under GLUA_REQUIRE_CUDA=1.

// onGPUAndCPU runs src (a script that sets the global got to a list of
// numbers; SEED in it becomes a random seed, logged) on a cuda runtime
// and on a CPU one, and returns what each got.
func onGPUAndCPU(t *testing.T, src string) (gpu, cpu []float64) {
	t.Helper()
	g := newCUDA(t)
	seed := time.Now().UnixNano()%2147483646 + 1
	t.Logf("seed %d", seed)
	src = strings.ReplaceAll(src, "SEED", fmt.Sprint(seed))
	gpu = luaNumbers(t, g, src)
	// room for arrays past a reduction's largest grid
	cpu = luaNumbers(t, newCPU(t, runtime.Options{CPUMemory: "2GiB"}), src)
	if len(gpu) != len(cpu) {
		t.Fatalf("the GPU gives %d numbers, the CPU %d", len(gpu), len(cpu))
	}
	return gpu, cpu
}

// uniform is a Lua function of the script filling a table with n numbers
// in [lo, hi) from a Park-Miller generator, exact in doubles, so that both
// runtimes draw the same numbers from one seed.
const uniform = `
cuda, kernels = require("cuda"), require("kernels")
local seed = SEED
local function uniform(n, lo, hi, integers)
  local t = {}
  for i = 1, n do
    seed = seed * 16807 % 2147483647
    local u = lo + (hi - lo) * (seed / 2147483647)
    t[i] = integers and math.floor(u) or u
  end
  return t
end
`

// gpuMath are the math library's functions with CUDA's documented maximum
// error, in ulps of the correctly rounded result, in single and double
// precision (the CUDA C Programming Guide's tables of the mathematical
// standard library functions; sqrt with NVRTC's default -prec-sqrt=true).
// The CPU's float32 result is the correctly rounded one, so the two
// backends may differ by the bound plus one ulp (the CPU's float64 value
// rounding the other way). Its float64 one is the Lua library's, C's as
// glibc computes it (correctly rounded, or within an ulp for log10, sinh,
// cosh and tanh), so there they may differ by the bound plus three.
var gpuMath = []struct {
	expr         string
	ulp32, ulp64 int
}{
	{"math.abs(a)", 0, 0}, {"math.acos(a)", 2, 2}, {"math.asin(a)", 2, 2},
	{"math.atan(a * 8)", 2, 2}, {"math.atan2(a, b - 2)", 3, 2}, {"math.cos(b * 3)", 2, 2},
	{"math.cosh(b)", 2, 1}, {"math.deg(a)", 0, 0}, {"math.exp(b)", 2, 1},
	{"math.fmod(b * 7, a)", 0, 0}, {"math.frexp(b * 100)", 0, 0}, {"math.ldexp(a, 5)", 0, 0},
	{"math.log(b)", 1, 1}, {"math.log10(b)", 2, 1}, {"math.max(a, b - 2, 0.25)", 0, 0},
	{"math.min(a, b - 2, 0.25)", 0, 0}, {"math.modf(b * a * 3)", 0, 0}, {"math.pow(b, a * 3)", 4, 2},
	{"b ^ a", 4, 2}, {"math.rad(b * 90)", 0, 0}, {"math.sin(b * 3)", 2, 2},
	{"math.sinh(b)", 3, 2}, {"math.sqrt(b)", 0, 0}, {"math.tan(a)", 4, 2},
	{"math.tanh(a * 3)", 2, 1}, {"math.floor(b * 3) + math.ceil(a * 3)", 0, 0},
	{"e", 0, 0}, {"fp", 0, 0}, // frexp's exponent and modf's fraction
}

// ulps is how many representable values of the dtype lie between x and y.
func ulps(x, y float64, single bool) float64 {
	if x == y || x != x && y != y {
		return 0
	}
	if x != x || y != y {
		return math.Inf(1)
	}
	// Ordered as integers, and subtracted as integers: a float64's bits
	// as a float64 would round the difference to a multiple of 512.
	order := func(v float64) int64 {
		if single {
			b := int64(math.Float32bits(float32(v)))
			if b&(1<<31) != 0 {
				b = -(b &^ (1 << 31))
			}
			return b
		}
		b := int64(math.Float64bits(v))
		if b < 0 {
			b = -(b &^ (-1 << 63))
		}
		return b
	}
	d := order(x) - order(y)
	if d < 0 {
		d = -d
	}
	return float64(d)
}

func TestJitMathOnTheGPUIsWithinCUDAsBoundsOfTheCPU(t *testing.T) {
	const n = 4096
	for _, dtype := range []string{"float32", "float64"} {
		t.Run(dtype, func(t *testing.T) {
			var body strings.Builder
			for k, m := range gpuMath {
				fmt.Fprintf(&body, "  out[%d][i] = %s\n", k+1, m.expr)
			}
			src := uniform + fmt.Sprintf(`
local n, dt = %d, %q
local x, y = cuda.to_device(uniform(n, -1, 1), dt), cuda.to_device(uniform(n, 0.5, 4.5), dt)
local out = cuda.zeros({%d, n}, dt)
kernels.jit(function(out, x, y)
  local i = kernels.grid(1)
  if i > #x then return end
  local a, b = x[i], y[i]
  local m, e = math.frexp(b * 100)
  local ip, fp = math.modf(b * a * 3)
%s
end):launch({grid = n / 256, block = 256}, out, x, y)
got = out:to_table()
local flat = {}
for _, row in ipairs(got) do for _, v in ipairs(row) do flat[#flat + 1] = v end end
for _, v in ipairs(x:to_table()) do flat[#flat + 1] = v end
for _, v in ipairs(y:to_table()) do flat[#flat + 1] = v end
got = flat
`, n, dtype, len(gpuMath), body.String())
			gpu, cpu := onGPUAndCPU(t, src)
			single := dtype == "float32"
			for k, m := range gpuMath {
				bound := float64(m.ulp64 + 3)
				if single {
					bound = float64(m.ulp32 + 1)
				}
				worst, at := 0.0, 0
				for i := 0; i < n; i++ {
					if d := ulps(gpu[k*n+i], cpu[k*n+i], single); d > worst {
						worst, at = d, i
					}
				}
				if worst > bound {
					a, b := cpu[len(gpuMath)*n+at], cpu[(len(gpuMath)+1)*n+at]
					t.Errorf("%s: the GPU gives %v and the CPU %v (a = %v, b = %v): %v ulps apart, more than %v", m.expr, gpu[k*n+at], cpu[k*n+at], a, b, worst, bound)
				}
			}
		})
	}
}

// The atomics' results that do not depend on the order the threads run
// in agree exactly: final counters, the sorted old values, extremes, and
// the values exchanged with the old ones.
func TestJitAtomicsAgreeBetweenGPUAndCPU(t *testing.T) {
	for _, dtype := range []string{"int32", "int64", "float32", "float64"} {
		t.Run(dtype, func(t *testing.T) {
			cas := ""
			if strings.HasPrefix(dtype, "int") {
				cas = `
  if kernels.atomic_cas(c, 6, 0, i) == 0 then kernels.atomic_add(c, 7, 1) end
  local seen = 0
  while true do
    local old = kernels.atomic_cas(c, 8, seen, seen + 1)
    if old == seen then break end
    seen = old
  end`
			}
			src := uniform + fmt.Sprintf(`
local n, dt = 3000, %q
local x = cuda.to_device(uniform(n, -1e6, 1e6, dt:find("int") ~= nil), dt)
local c = cuda.to_device({0, n, -1e9, 1e9, 0, 0, 0, 0}, dt)
local olds = cuda.zeros({3, n}, "float64")
kernels.jit(function(c, x, olds)
  local i = kernels.grid(1)
  if i > #x then return end
  olds[1][i] = kernels.atomic_add(c, 1, 1)
  olds[2][i] = kernels.atomic_sub(c, 2, 1)
  kernels.atomic_max(c, 3, x[i])
  local m = kernels.atomic_min(c, 4, x[i])
  olds[3][i] = kernels.atomic_exch(c, 5, i)%s
end):launch({grid = 24, block = 128}, c, x, olds)
local final, o = c:to_table(), olds:to_table()
table.insert(o[3], final[5])
final[5] = 0
if final[6] >= 1 and final[6] <= n then final[6] = 1 end -- who claimed the slot varies
got = final
for k = 1, 3 do
  table.sort(o[k])
  for _, v in ipairs(o[k]) do got[#got + 1] = v end
end
local mx, mn = -math.huge, math.huge
for _, v in ipairs(x:to_table()) do mx, mn = math.max(mx, v), math.min(mn, v) end
assert(c:to_table()[3] == mx and c:to_table()[4] == mn, "atomic max/min")
`, dtype, cas)
			gpu, cpu := onGPUAndCPU(t, src)
			for i := range gpu {
				if gpu[i] != cpu[i] {
					t.Fatalf("value %d: the GPU gives %v, the CPU %v", i+1, gpu[i], cpu[i])
				}
			}
		})
	}
}

// Float max and min as Numba's on both: a NaN in the element or the value
// leaves the element; -0 and +0 are equal, so neither replaces the other.
func TestJitFloatAtomicExtremesTreatNaNAsNumba(t *testing.T) {
	for _, dtype := range []string{"float32", "float64"} {
		gpu, cpu := onGPUAndCPU(t, uniform+fmt.Sprintf(`
local c = cuda.to_device({0, 0 / 0, 5, -0.0, 1}, %q)
local olds = cuda.zeros(5, "float64")
kernels.jit(function(c, olds, nan)
  olds[1] = kernels.atomic_max(c, 1, 2.5)
  olds[2] = kernels.atomic_max(c, 2, 7)
  olds[3] = kernels.atomic_min(c, 3, nan)
  olds[4] = kernels.atomic_max(c, 4, 0.0)
  olds[5] = kernels.atomic_min(c, 5, -1)
end):launch({grid = 1, block = 1}, c, olds, 0 / 0)
got = c:to_table()
for _, v in ipairs(olds:to_table()) do got[#got + 1] = v end
`, dtype))
		for i := range gpu {
			if gpu[i] != cpu[i] && !(gpu[i] != gpu[i] && cpu[i] != cpu[i]) || math.Signbit(gpu[i]) != math.Signbit(cpu[i]) {
				t.Errorf("%s, value %d: the GPU gives %v, the CPU %v", dtype, i+1, gpu[i], cpu[i])
			}
		}
	}
}

// Warp shuffles: each warp's shuffle-tree sum (the same additions in the
// same order on both, so the same bits), a butterfly maximum with
// shfl_xor, lanes with a 2-D block, sources past the warp, a block of 48
// threads whose partial warp only reads its own lanes, and a block sum
// from warp sums, shared memory and syncthreads.
func TestJitWarpPrimitivesAgreeBetweenGPUAndCPU(t *testing.T) {
	for _, dtype := range []string{"int64", "float32", "float64"} {
		t.Run(dtype, func(t *testing.T) {
			zero := "0"
			if dtype != "int64" {
				zero = "0.0"
			}
			src := uniform + fmt.Sprintf(`
local n, dt = 5000, %q
local x = cuda.to_device(uniform(n, -1000, 1000, dt == "int64"), dt)
local sums, total = cuda.zeros(math.ceil(n / 256) * 8, dt), cuda.zeros(1, "float64")
kernels.jit(function(sums, total, x)
  local i = kernels.grid(1)
  local v = %s
  if i <= #x then v = x[i] end
  local offset = math.floor(kernels.warpsize / 2)
  while offset >= 1 do
    v = v + kernels.shfl_down(v, offset)
    offset = math.floor(offset / 2)
  end
  if kernels.laneid() == 1 then
    sums[math.floor((i - 1) / 32) + 1] = v
    kernels.atomic_add(total, 1, v)
  end
end):launch({grid = math.ceil(n / 256), block = 256}, sums, total, x)

local lanes, maxima, own = cuda.zeros(96, "int64"), cuda.zeros(96, dt), cuda.zeros({96, 4}, dt)
kernels.jit(function(lanes, maxima, own, x)
  local tx, ty = kernels.grid(2)
  local i = (ty - 1) * 8 + tx
  lanes[i] = kernels.laneid()
  local v = x[i]
  local mask = 1
  while mask < kernels.warpsize do
    v = math.max(v, kernels.shfl_xor(v, mask))
    mask = mask * 2
  end
  maxima[i] = v
  own[i][1] = kernels.shfl_down(x[i], 31)
  own[i][2] = kernels.shfl_down(x[i], 40)
  own[i][3] = kernels.shfl_xor(x[i], 33)
  own[i][4] = kernels.shfl_down(x[i], -3)
end):launch({grid = 1, block = {8, 12}}, lanes, maxima, own, x)

local partial = cuda.zeros(96, dt)
kernels.jit(function(out, x)
  local i = kernels.grid(1)
  local v = x[i]
  for k = 0, 3 do v = v + kernels.shfl_xor(v, math.floor(2 ^ k)) end
  kernels.syncwarp()
  out[i] = v
end):launch({grid = 2, block = 48}, partial, x)

local blocks = cuda.zeros(8, "float64")
kernels.jit(function(out, x)
  local s = kernels.shared(8, "float64")
  local i = kernels.grid(1)
  local lane = kernels.laneid()
  local w = math.floor((i - 1) %% 256 / 32) + 1
  local v = 0.0
  if i <= #x then v = x[i] end
  for k = 0, 4 do v = v + kernels.shfl_down(v, math.floor(2 ^ (4 - k))) end
  if lane == 1 then s[w] = v end
  kernels.syncthreads()
  if w == 1 then
    v = 0.0
    if lane <= 8 then v = s[lane] end
    v = v + kernels.shfl_xor(v, 1)
    v = v + kernels.shfl_xor(v, 2)
    v = v + kernels.shfl_xor(v, 4)
    if lane == 1 then out[math.floor((i - 1) / 256) + 1] = v end
  end
end):launch({grid = 8, block = 256}, blocks, x)

got = {}
for _, a in ipairs({sums, lanes, maxima, own:reshape(-1), partial, blocks}) do
  for _, v in ipairs(a:to_table()) do got[#got + 1] = v end
end
got[#got + 1] = total:to_table()[1]
`, dtype, zero)
			gpu, cpu := onGPUAndCPU(t, src)
			last := len(gpu) - 1
			for i := 0; i < last; i++ {
				tol := 0.0
				if i >= last-8 && dtype == "float32" {
					tol = 1e-12 // the block sums are float64 work on both
				}
				if math.Abs(gpu[i]-cpu[i]) > tol*math.Max(1, math.Abs(cpu[i])) {
					t.Fatalf("value %d: the GPU gives %v, the CPU %v", i+1, gpu[i], cpu[i])
				}
			}
			// the atomic total adds the warps' sums in any order
			if math.Abs(gpu[last]-cpu[last]) > 1e-9*math.Max(1, math.Abs(cpu[last])) {
				t.Errorf("total: the GPU gives %v, the CPU %v", gpu[last], cpu[last])
			}
		})
	}
}
