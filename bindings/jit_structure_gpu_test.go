package bindings_test

import (
	"math"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/runtime"
)

// structureKernels launches a kernel of each structural construct on
// arrays drawn from the seed `seed` and leaves each result, flattened, in
// the global table results: Numba's fast_matmul with a captured tile size
// of 12 (not a divisor of the sizes), the padded-tile transpose, a 3-D
// shared array read mirrored, 2-D local arrays, device functions of
// several values on floats, a local whose type the float values widen, a
// device function that sums its warp with shuffles, and math.modf's two
// values stored at once.
const structureKernels = `
local cuda, kernels = require("cuda"), require("kernels")
local TPB, TILE = 12, 32
results = {}
local function keep(name, a)
  local flat = a:reshape(-1):to_table()
  results[name] = flat
end

local fast_matmul = kernels.jit(function(A, B, C)
  local sA = kernels.shared({ TPB, TPB }, "float32")
  local sB = kernels.shared({ TPB, TPB }, "float32")
  local x, y = kernels.grid(2)
  local tx, ty = kernels.threadIdx.x, kernels.threadIdx.y
  local tmp = 0.0
  for i = 0, kernels.gridDim.x - 1 do
    sA[ty][tx] = 0
    sB[ty][tx] = 0
    if y <= A.shape[1] and tx + i * TPB <= A.shape[2] then sA[ty][tx] = A[y][tx + i * TPB] end
    if x <= B.shape[2] and ty + i * TPB <= B.shape[1] then sB[ty][tx] = B[ty + i * TPB][x] end
    kernels.syncthreads()
    for j = 1, TPB do tmp = tmp + sA[ty][j] * sB[j][tx] end
    kernels.syncthreads()
  end
  if y <= C.shape[1] and x <= C.shape[2] then C[y][x] = tmp end
end)
local n = 100
local A, B, C = cuda.rand({ n, n }, "float32", seed), cuda.rand({ n, n }, "float32", seed + 1), cuda.zeros({ n, n })
local blocks = math.ceil(n / TPB)
fast_matmul:launch({ grid = { blocks, blocks }, block = { TPB, TPB } }, A, B, C)
keep("fast_matmul", C)

local transpose = kernels.jit(function(A, T)
  local tile = kernels.shared({ TILE, TILE + 1 }, "float32")
  local tx, ty = kernels.threadIdx.x, kernels.threadIdx.y
  local bx, by = kernels.blockIdx.x, kernels.blockIdx.y
  local row, col = (by - 1) * TILE + ty, (bx - 1) * TILE + tx
  if row <= A.shape[1] and col <= A.shape[2] then tile[ty][tx] = A[row][col] end
  kernels.syncthreads()
  row, col = (bx - 1) * TILE + ty, (by - 1) * TILE + tx
  if row <= T.shape[1] and col <= T.shape[2] then T[row][col] = tile[tx][ty] end
end)
local R = cuda.rand({ 70, 45 }, "float32", seed + 2)
local T = cuda.zeros({ 45, 70 })
transpose:launch({ grid = { 2, 3 }, block = { TILE, TILE } }, R, T)
keep("transpose", T)

local mirror = kernels.jit(function(x, out)
  local s = kernels.shared({ 2, 3, 4 }, "float64")
  local tx, ty, tz = kernels.threadIdx.x, kernels.threadIdx.y, kernels.threadIdx.z
  local k = ((tz - 1) * 3 + (ty - 1)) * 4 + tx
  s[tz][ty][tx] = x[k]
  kernels.syncthreads()
  out[k] = s[3 - tz][4 - ty][5 - tx]
end)
local x3, o3 = cuda.rand(24, "float64", seed + 3), cuda.zeros(24, "float64")
mirror:launch({ grid = 1, block = { 4, 3, 2 } }, x3, o3)
keep("shared3", o3)

local function polar(x, y)
  return math.sqrt(x * x + y * y), math.floor(x * 10) % 7
end
local function scaled(x, y)
  local r, k = polar(x, y)
  return r * 2, k
end
local locals = kernels.jit(function(m, out, ks)
  local i = kernels.grid(1)
  if i <= m.shape[1] then
    local a = kernels.local_array({ 2, 4 }, "float32")
    local s = 0
    for j = 1, 4 do
      a[1][j], a[2][j] = scaled(m[i][j], m[i][5 - j])
      s = s + a[1][j]
    end
    for j = 1, 4 do
      out[i][j] = a[1][5 - j] / s
      ks[i][j] = a[2][j]
    end
  end
end)
local m = cuda.rand({ 300, 4 }, "float32", seed + 4)
local lo, lk = cuda.zeros({ 300, 4 }), cuda.zeros({ 300, 4 }, "int32")
locals:launch({ grid = 3, block = 128 }, m, lo, lk)
keep("local_arrays", lo)
keep("device_functions", lk)

local function warpSum(v)
  local o = 16
  while o >= 1 do
    v = v + kernels.shfl_down(v, o)
    o = math.floor(o / 2)
  end
  return v
end
local warps = kernels.jit(function(x, sums, ip, fp)
  local i = kernels.grid(1)
  local v = 0.0
  if i <= #x then
    v = x[i]
    ip[i], fp[i] = math.modf(x[i] * 100)
  end
  local s = warpSum(v)
  if kernels.laneid() == 1 then sums[math.floor((i - 1) / 32) + 1] = s end
end)
local xw = cuda.rand(1000, "float32", seed + 5)
local sums, ip, fp = cuda.zeros(32), cuda.zeros(1000), cuda.zeros(1000)
warps:launch({ grid = 4, block = 256 }, xw, sums, ip, fp)
keep("warp_device_function", sums)
keep("modf_integer_parts", ip)
keep("modf_fractions", fp)
`

// structureResults runs structureKernels on rt with seed and returns its
// results.
func structureResults(t *testing.T, rt *runtime.Runtime, seed int64) map[string][]float64 {
	t.Helper()
	L := rt.Lua()
	L.SetGlobal("seed", lua.LNumber(seed))
	if err := rt.DoString(structureKernels); err != nil {
		t.Fatalf("%s: %v", rt.Backend(), err)
	}
	out := map[string][]float64{}
	L.GetGlobal("results").(*lua.LTable).ForEach(func(k, v lua.LValue) {
		var vals []float64
		v.(*lua.LTable).ForEach(func(_, x lua.LValue) { vals = append(vals, float64(x.(lua.LNumber))) })
		out[k.String()] = vals
	})
	return out
}

// TestKernelStructureAgreesOnTheGPUAndTheCPU runs each structural
// construct of the kernel language on the GPU and on the CPU evaluator, on
// the same fresh random data, and compares: float32 work within rounding
// (the products sum in one order on both, so only the GPU's sqrt and the
// tiles' float32 steps may differ), the rest exactly (a warp's shuffles
// add in one order on both). It skips without a
// GPU, and fails instead under GLUA_REQUIRE_CUDA=1.
func TestKernelStructureAgreesOnTheGPUAndTheCPU(t *testing.T) {
	gpu, err := runtime.New(runtime.Options{Backend: "cuda", Config: defaultConfig()})
	if err != nil {
		cudatest.Unavailable(t, err)
	}
	defer gpu.Close()
	cpu, err := runtime.New(runtime.Options{Backend: "cpu", Config: defaultConfig(), CPUMemory: "1GiB"})
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	seed := time.Now().UnixNano() % 1_000_000
	t.Logf("seed %d", seed)
	want, got := structureResults(t, cpu, seed), structureResults(t, gpu, seed)
	tolerance := map[string]float64{"fast_matmul": 1e-6, "local_arrays": 1e-6}
	for name, w := range want {
		g := got[name]
		if len(g) != len(w) {
			t.Errorf("%s: the GPU gives %d values, the CPU %d", name, len(g), len(w))
			continue
		}
		for i := range w {
			if d := math.Abs(g[i] - w[i]); !(d <= tolerance[name]*math.Max(1, math.Abs(w[i]))) {
				t.Errorf("%s element %d: the GPU gives %v, the CPU %v", name, i+1, g[i], w[i])
				break
			}
		}
	}
	if len(want) != 8 || len(got) != 8 {
		t.Errorf("%d results on the CPU and %d on the GPU, want 8", len(want), len(got))
	}
}
