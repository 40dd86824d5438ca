package runtime_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gluaproject/glua/kernels"
	"github.com/gluaproject/glua/runtime"
)

// The elementwise kernels' shape on the GPU (16-byte vectors where every
// pointer is aligned, elements where one is not, a tail shorter than a
// vector, 32-bit indices, and 64-bit ones past 2^31 elements) gives the
// CPU backend's values bit for bit, for the built-ins and kernels.map
// alike. They skip without a GPU, and fail instead under
// GLUA_REQUIRE_CUDA=1.

// elementwiseCases builds, for each dtype, arrays of n elements (a
// vector's multiple, a tail, fewer than a vector) from the seeded
// uniform numbers, and runs each operation on the whole arrays (aligned)
// and on views one element in (no pointer 16-byte aligned), appending
// every element of every result to got.
const elementwiseCases = uniform + `
got = {}
local function keep(a)
  for _, v in ipairs(a:reshape(-1):to_table()) do got[#got + 1] = v end
end
local function axpy_fn(a, x, y) return a * x + y end
local function chain_fn(x, a, b, c, d) return ((x * a + b) * x - c) / d end
local function mixed_fn(h, f) return h * f - 0.5 end
local function idiv_fn(x, y) return x % y + math.floor(x / 7) end
for _, dt in ipairs({"float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8"}) do
  local int = dt == "int32" or dt == "int64" or dt == "uint8"
  for _, n in ipairs({4096, 2053, 3}) do
    local lo, hi = int and 1 or -4, int and 60 or 4
    local xs, ys = uniform(n + 1, lo, hi, int), uniform(n + 1, lo, hi, int)
    for _, view in ipairs({false, true}) do
      local function fresh(t)
        local a = cuda.to_device(t, dt)
        if view then return a:rows(2, n + 1) end
        return a:rows(1, n)
      end
      local y, x = fresh(ys), fresh(xs)
      kernels.add(y, x); keep(y)
      kernels.axpy(y, 3, x); keep(y)
      kernels.scale(y, 2); keep(y)
      kernels.sub(y, x); keep(y)
      kernels.maximum(y, x); keep(y)
      local out = fresh(ys)
      kernels.map(axpy_fn, out, 3, x, y); keep(out)
      kernels.map(chain_fn, out, x, 1.5, 0.25, 0.75, 2); keep(out)
      if int then
        kernels.map(idiv_fn, out, x, y); keep(out)
      end
      -- a float16 input beside a float32 output: one entry, elements
      local h = cuda.device_array(n, "float16")
      kernels.copy(h, x)
      local f = cuda.device_array(n, "float32")
      kernels.copy(f, y)
      kernels.map(mixed_fn, f, h, f); keep(f)
    end
  end
end
`

func TestElementwiseKernelsAndMapsOnTheGPUGiveTheCPUsBits(t *testing.T) {
	gpu, cpu := onGPUAndCPU(t, elementwiseCases)
	bad := 0
	for i := range gpu {
		if math.Float64bits(gpu[i]) != math.Float64bits(cpu[i]) {
			if bad < 10 {
				t.Errorf("element %d of the results: GPU %v, CPU %v", i+1, gpu[i], cpu[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d elements differ", bad, len(gpu))
	}
	if len(gpu) < 100000 {
		t.Errorf("only %d elements compared", len(gpu))
	}
}

// An integer % by zero inside a map's vectorised loop, its scalar loop
// and its tail stops the map with the CPU's message, on a GPU as there.
func TestMapTrapInsideVectorsAndTailGivesTheCPUsError(t *testing.T) {
	g := newCUDA(t)
	c := newCPU(t, runtime.Options{})
	// a vector's first lane, one inside, the last vector's last lane, the
	// tail; the views (4096 elements) take the element loop
	for _, at := range []string{"1", "2050", "4096", "4097"} {
		for _, view := range []string{"false", "true"} {
			if view == "true" && at == "4097" {
				continue
			}
			src := `
cuda, kernels = require("cuda"), require("kernels")
local n, at, view = 4097, ` + at + `, ` + view + `
local ys = {}
for i = 1, n do ys[i] = (i == at + (view and 1 or 0)) and 0 or 3 end
local x = cuda.full(n, 7, "int32")
local y = cuda.to_device(ys, "int32")
local out = cuda.zeros(n, "int32")
if view then x, y, out = x:rows(2, n), y:rows(2, n), out:rows(2, n) end
local ok, err = pcall(kernels.map, function(a, b) return a % b end, out, x, y)
assert(not ok, "the map did not fail")
msg = tostring(err)
`
			var msgs [2]string
			for i, rt := range []*runtime.Runtime{g, c} {
				if err := rt.DoString(src); err != nil {
					t.Fatalf("zero at %s, view %s: %v", at, view, err)
				}
				v, err := rt.Global("msg")
				if err != nil {
					t.Fatal(err)
				}
				msgs[i], _ = v.(string)
			}
			if msgs[0] != msgs[1] || !strings.Contains(msgs[0], "integer modulo by zero") {
				t.Errorf("zero at %s, view %s: the GPU says %q, the CPU %q", at, view, msgs[0], msgs[1])
			}
		}
	}
}

// Past 2^31 elements the kernels index with 64 bits: every element of a
// uint8 add, an unaligned add, and a map over 2^31 + 21 elements is
// written, which the exact integer sum shows.
func TestElementwiseKernelsPast2To31ElementsWriteEveryElement(t *testing.T) {
	g := newCUDA(t)
	src := `
cuda, kernels = require("cuda"), require("kernels")
local n = 2^31 + 21
local x, y = cuda.full(n, 3, "uint8"), cuda.full(n, 5, "uint8")
kernels.add(y, x)
sums = {kernels.sum(y)}
kernels.add(y:rows(2, n), x:rows(2, n))
sums[2] = kernels.sum(y)
kernels.map(function(a, b) return a * 2 + b end, y, x, x)
sums[3] = kernels.sum(y)
kernels.map(function(a, b) return a + b end, y:rows(2, n), y:rows(2, n), x:rows(1, n - 1))
sums[4] = kernels.sum(y)
got = sums
`
	sums := luaNumbers(t, g, src)
	n := float64(1<<31 + 21)
	want := []float64{8 * n, 8 + 11*(n-1), 9 * n, 9 + 12*(n-1)}
	for i := range want {
		if sums[i] != want[i] {
			t.Errorf("sum %d: %v, want %v", i+1, sums[i], want[i])
		}
	}
}

// A map's first launch compiles only the entry it runs (a module of one
// entry and one index type); a launch that needs another entry, as one
// over arrays not 16-byte aligned does, compiles that one then, and a
// launch of an entry already made compiles nothing.
func TestAMapCompilesEachEntryWhenALaunchFirstNeedsIt(t *testing.T) {
	g := newCUDA(t)
	src := `
cuda, kernels = require("cuda"), require("kernels")
local function made() local s = kernels.cache_stats(); return s.compiles + s.cache_hits end
local f = function(a, x, y) return a * x + y end
local x, y, z = cuda.rand(1025, "float32", 1), cuda.rand(1025, "float32", 2), cuda.rand(1025, "float32", 3)
local c0 = made()
kernels.map(f, z, 2, x, y)
local c1 = made()
kernels.map(f, z, 3, y, x)
local c2 = made()
kernels.map(f, z:rows(2, 1025), 2, x:rows(1, 1024), y:rows(1, 1024))
local c3 = made()
kernels.map(f, z:rows(2, 1025), 2, x:rows(2, 1025), y:rows(1, 1024))
got = {c1 - c0, c2 - c1, c3 - c2, made() - c3}
`
	got := luaNumbers(t, g, src)
	want := []float64{1, 0, 1, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("modules made by launch %d: %v, want %v (all: %v)", i+1, got[i], want[i], got)
		}
	}
}

// kernels.map's vector entries launch as the built-in elementwise
// kernels reading as many arrays do on this device
// (kernels.ElementwiseResidency), and give the same numbers as the
// element loop of a view one element in, with one array read and with
// two.
func TestMapsOnTheGPULaunchWithTheBuiltInsResidency(t *testing.T) {
	g := newCUDA(t)
	info, err := g.Device()
	if err != nil {
		t.Fatal(err)
	}
	got := luaNumbers(t, g, `
cuda, kernels = require("cuda"), require("kernels")
local n = 2 ^ 20
local x = cuda.rand(n + 1, "float32")
local y = cuda.rand(n + 1, "float32")
got = {}
local function compare(f, ...)
  local whole, view = cuda.device_array(n + 1, "float32"), cuda.device_array(n + 1, "float32")
  local arrays = {...}
  local views = {}
  for i, a in ipairs(arrays) do views[i] = a:rows(2, n + 1) end
  kernels.map(f, whole, 3, unpack(arrays))
  kernels.map(f, view:rows(2, n + 1), 3, unpack(views))
  got[#got + 1] = kernels.max_abs_diff(whole:rows(2, n + 1), view:rows(2, n + 1))
  got[#got + 1] = kernels.norm(whole)
end
compare(function(a, x, y) return a * x + y end, x, y)
compare(function(a, x) return a * x - 1 end, x)
`)
	for i := 0; i < len(got); i += 2 {
		if got[i] != 0 || !(got[i+1] > 0) {
			t.Errorf("map %d: the vector entry and the element loop differ by %v (norm %v)", i/2+1, got[i], got[i+1])
		}
	}
	for inputs := 1; inputs <= 3; inputs++ {
		shared, carveout := g.MapResidency(inputs)
		wantShared, wantCarveout := kernels.ElementwiseResidency(info.ComputeCapability, inputs)
		if shared != wantShared || carveout != wantCarveout {
			t.Errorf("maps reading %d arrays launch with %d bytes of shared memory at a %d%% carveout; the built-ins with %d at %d%% (compute capability %v)",
				inputs, shared, carveout, wantShared, wantCarveout, info.ComputeCapability)
		}
	}
}
