package runtime_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

// nanInputs are the values every pair of which the NaN test combines:
// NaNs of both signs with and without a payload (kept by float32 and the
// 2-byte floats, in their top bits), and numbers that make NaNs together
// (0/0, ∞−∞, 0·∞, √−1, log −1).
var nanInputs = []uint64{
	0xfff8000000000000, 0x7ff8000000000000, 0x7ffa400000000000, 0xfffd000000000000,
	0, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000,
	0x7ff0000000000000, 0xfff0000000000000, 0x4004000000000000,
}

// quietNaNs are the NaNs among nanInputs and extra, quieted, as
// arithmetic passes them on.
func quietNaNs(extra ...uint64) []uint64 {
	var out []uint64
	for _, b := range append(slices.Clone(nanInputs), extra...) {
		if v := math.Float64frombits(b); v != v {
			out = append(out, b|0x8000000000000)
		}
	}
	return out
}

// nanScript runs every kind of arithmetic glua has over x and y, arrays
// holding each pair of nanInputs, in each float dtype, and records each
// result with its name in got and names.
// nanPairs is the head of the NaN tests' scripts: x64 and y64, float64
// arrays of n*n elements, hold each pair of the n inputs (inputs[i],
// inputs[j]) at (i - 1)*n + j; got and names collect the results.
const nanPairs = `
cuda, kernels = require("cuda"), require("kernels")
got, names = {}, {}
local n = #inputs
local hx, hy = cuda.host_array(n * n, "float64"), cuda.host_array(n * n, "float64")
for i = 1, n do
  for j = 1, n do
    hx[(i - 1) * n + j], hy[(i - 1) * n + j] = inputs[i], inputs[j]
  end
end
local x64, y64 = cuda.to_device(hx), cuda.to_device(hy)
`

const nanScript = nanPairs + `local function record(name, a)
  for k, v in ipairs(a:reshape({ a.size }):to_table()) do
    got[#got + 1] = v
    names[#names + 1] = name .. " " .. k
  end
end
local function put(name, v) got[#got + 1] = v; names[#names + 1] = name end
local maps = {
  add = function(v, w) return v + w end, sub = function(v, w) return v - w end,
  mul = function(v, w) return v * w end, div = function(v, w) return v / w end,
  neg = function(v, w) return -v end, abs = function(v, w) return math.abs(v) end,
  sqrt = function(v, w) return math.sqrt(v) end, sin = function(v, w) return math.sin(v) end,
  exp = function(v, w) return math.exp(v) end, log = function(v, w) return math.log(v) end,
  pow = function(v, w) return v ^ w end, mod = function(v, w) return v % w end,
  fmod = function(v, w) return math.fmod(v, w) end, atan2 = function(v, w) return math.atan2(v, w) end,
  max = function(v, w) return math.max(v, w) end, min = function(v, w) return math.min(v, w) end,
  tanh = function(v, w) return math.tanh(v) end, deg = function(v, w) return math.deg(v) end,
  ldexp = function(v, w) return math.ldexp(v, 3) end,
  axpy = function(v, w) return 2 * v + w end, negsum = function(v, w) return -(v + w) end,
}
local mapNames = {}
for name in pairs(maps) do mapNames[#mapNames + 1] = name end
table.sort(mapNames)
local atomic = kernels.jit(function(out, x, n)
  local i = kernels.grid(1)
  if i <= #x then kernels.atomic_add(out, (i - 1) % n + 1, x[i]) end
end)
for _, d in ipairs({ "float32", "float64", "float16", "bfloat16" }) do
  local x, y = cuda.device_array({ n * n }, d), cuda.device_array({ n * n }, d)
  kernels.copy(x, x64)
  kernels.copy(y, y64)
  record(d .. " x", x)
  for _, op in ipairs({ "add", "mul", "sub", "div", "maximum", "minimum" }) do
    local r = y:clone()
    kernels[op](r, x)
    record(d .. " kernels." .. op, r)
  end
  local r = y:clone()
  kernels.axpy(r, 2, x)
  record(d .. " kernels.axpy", r)
  for _, op in ipairs({ { "scale", 2 }, { "add_scalar", 1 }, { "div_scalar", 0 }, { "rsub", 1 }, { "rdiv", 1 } }) do
    local r = x:clone()
    kernels[op[1]](r, op[2])
    record(d .. " kernels." .. op[1], r)
  end
  record(d .. " -x", -x)
  record(d .. " x*y", x * y)
  for _, name in ipairs(mapNames) do
    local out = cuda.device_array({ n * n }, d)
    kernels.map(maps[name], out, x, y)
    record(d .. " map " .. name, out)
  end
  local wide = cuda.device_array({ n * n }, "float64")
  kernels.map(function(v) return -v end, wide, x)
  record(d .. " map -v into float64", wide)
  kernels.map(function(v) return math.abs(v) end, wide, x)
  record(d .. " map abs(v) into float64", wide)
  local single = cuda.device_array({ n * n }, "float32")
  kernels.map(function(v, w) return -(v * 2) end, single, x, 2.5)
  record(d .. " map -(v*2) into float32", single)
  local half = cuda.device_array({ n * n }, "float16")
  kernels.map(function(v, w) return v * w end, half, x, y)
  record(d .. " map v*w into float16", half)
  put(d .. " sum", kernels.sum(x))
  put(d .. " norm", kernels.norm(x))
  put(d .. " max_abs_diff", kernels.max_abs_diff(x, y))
  for _, op in ipairs({ "sum", "prod", "max", "min" }) do
    put(d .. " map_reduce " .. op, kernels.map_reduce(function(v, w) return v * w end, op, x, y))
    put(d .. " map_reduce v " .. op, kernels.map_reduce(function(v) return v end, op, x))
    for axis = 1, 2 do
      record(d .. " map_reduce v+w " .. op .. " axis " .. axis,
        kernels.map_reduce(function(v, w) return v + w end, op, x:reshape({ n, n }), y:reshape({ n, n }), { axis = axis }))
    end
  end
  if d == "float32" or d == "float64" then
    local out = cuda.zeros({ n }, d)
    atomic:launch({ grid = math.ceil(n * n / 128), block = 128 }, out, x, n)
    record(d .. " atomic_add", out)
  end
  local c = cuda.device_array({ n, n }, d)
  kernels.matmul(c, x:reshape({ n, n }), y:reshape({ n, n }))
  record(d .. " matmul", c)
  -- beta·C where C holds the NaNs: alone (K = 0) and beside a product
  local none, ones = cuda.device_array({ n, 0 }, d), cuda.ones({ n, n }, d)
  for _, beta in ipairs({ 2, 1 }) do
    kernels.copy(c, x:reshape({ n, n }))
    kernels.matmul(c, none, none:reshape({ 0, n }), { beta = beta })
    record(d .. " matmul K=0 beta=" .. beta, c)
    kernels.copy(c, x:reshape({ n, n }))
    kernels.matmul(c, ones, ones, { beta = beta })
    record(d .. " matmul beta=" .. beta, c)
  end
end
`

func nanNumbers(t *testing.T, rt *runtime.Runtime) ([]float64, []string) {
	t.Helper()
	setNaNInputs(t, rt)
	return luaNumbers(t, rt, nanScript), luaStrings(t, rt, "names")
}

// setNaNInputs sets the global inputs to a host array of nanInputs.
func setNaNInputs(t *testing.T, rt *runtime.Runtime) {
	t.Helper()
	if err := rt.DoString(fmt.Sprintf(`inputs = require("cuda").host_array(%d, "float64")`, len(nanInputs))); err != nil {
		t.Fatal(err)
	}
	v, err := rt.Global("inputs")
	if err != nil {
		t.Fatal(err)
	}
	b := v.(*runtime.HostArray).Bytes()
	for i, bits := range nanInputs {
		for k := range 8 {
			b[8*i+k] = byte(bits >> (8 * k))
		}
	}
}

// luaStrings is the global table of strings called name.
func luaStrings(t *testing.T, rt *runtime.Runtime, name string) []string {
	t.Helper()
	tbl, ok := rt.Lua().GetGlobal(name).(*lua.LTable)
	if !ok {
		t.Fatalf("no table %s", name)
	}
	var out []string
	tbl.ForEach(func(_, v lua.LValue) { out = append(out, v.String()) })
	return out
}

// On the CPU backend, arithmetic that gives a NaN gives the bits the
// GPU's does (kernels/nan.go; the GPU test compares the two): float32 and
// the 2-byte floats their one NaN wherever a NaN is computed, selections
// (maximum, minimum, math.max, math.min) their operand's, float64 an
// operand's NaN with its sign, even through negation and math.abs, and a
// reduction's number Go's NaN.
func TestNaNsFollowTheGPUsRulesOnTheCPUBackend(t *testing.T) {
	nums, names := nanNumbers(t, newCPU(t, runtime.Options{}))
	// float32's NaN, and it stored as the 2-byte floats (cuBLAS stores a
	// float16 product's NaN as 0x7fff)
	arith := map[string]uint64{"float32": 0x7fffffffe0000000, "float16": 0x7ff8000000000000, "bfloat16": 0x7fffe00000000000}
	keeps := []string{" x ", " kernels.maximum ", " kernels.minimum ", " map max ", " map min "}
	n, checked := len(nanInputs), 0
	for i, v := range nums {
		name, bits := names[i], math.Float64bits(v)
		f := strings.Fields(name)
		k := 0
		fmt.Sscan(f[len(f)-1], &k)
		out := f[0] // the result's dtype
		if i := slices.Index(f, "into"); i >= 0 {
			out = f[i+1]
		} else if f[1] == "map_reduce" && !strings.Contains(name, "axis") {
			out = "float64" // a number, combined in float64
		}
		switch {
		case v == v:
		case len(f) == 2 && (f[1] == "sum" || f[1] == "norm" || f[1] == "max_abs_diff"):
			if bits != math.Float64bits(math.NaN()) {
				t.Errorf("%s: %#x, want Go's NaN", name, bits)
			}
		case (out == "float64") != (f[0] == "float64"):
			// computed in one float type and converted to the other,
			// which keeps a NaN's sign and the payload bits that fit
		case arith[out] != 0 && !slices.ContainsFunc(keeps, func(s string) bool { return strings.Contains(name, s) }):
			want := arith[out]
			// K = 0 is the runtime's scale, an elementwise kernel
			if out == "float16" && strings.Contains(name, " matmul ") && !strings.Contains(name, " K=0 ") {
				want = 0x7ffffc0000000000
			}
			if bits != want {
				t.Errorf("%s: %#x, want %#x", name, bits, want)
			}
			checked++
		case f[0] == "float64" && (strings.Contains(name, " map neg ") || strings.Contains(name, " map abs ")):
			if in := nanInputs[(k-1)/n]; bits != in|0x8000000000000 {
				t.Errorf("%s: %#x, want %#x, its operand's", name, bits, in|0x8000000000000)
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Fatalf("%d NaN results checked", checked)
	}
}

// A product of 0 and an infinity or a NaN is a NaN, so a matrix product
// with one is NaN where they meet, as NumPy's and cuBLAS's are: BLAS
// implementations that skip a zero factor would leave a number there.
func TestMatmulOfZeroAndAnInfinityOrANaNIsNaN(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	nums := luaNumbers(t, rt, `
cuda, kernels = require("cuda"), require("kernels")
got = {}
for _, d in ipairs({ "float32", "float64", "float16", "bfloat16" }) do
  for _, bad in ipairs({ math.huge, 0 / 0 }) do
    for _, trans in ipairs({ { false, false }, { true, false }, { false, true }, { true, true } }) do
      local a, b = cuda.zeros({ 2, 2 }, d), cuda.zeros({ 2, 2 }, d)
      a[1][2], b[2][1] = 1, bad -- A = [0 1; 0 0], B = [0 0; bad 0]
      if trans[1] then a[1][2], a[2][1] = 0, 1 end
      if trans[2] then b[2][1], b[1][2] = 0, bad end
      local c = cuda.full({ 2, 2 }, 5, d)
      kernels.matmul(c, a, b, { trans_a = trans[1], trans_b = trans[2] })
      for _, row in ipairs(c:to_table()) do for _, v in ipairs(row) do got[#got + 1] = v end end
    end
  end
end
`)
	// C = A·B: row 1 is 0·B[1] + 1·B[2] = [bad 0]; row 2 is 0·B = [0·bad 0]
	for i := 0; i < len(nums); i += 4 {
		c := nums[i : i+4]
		bad := i/16%2 == 0
		if !math.IsNaN(c[2]) || c[1] != 0 || c[3] != 0 || bad && !math.IsInf(c[0], 1) || !bad && !math.IsNaN(c[0]) {
			t.Errorf("product %d: C = %v, want [%s 0; NaN 0]", i/4+1, c, map[bool]string{true: "+Inf", false: "NaN"}[bad])
		}
	}
	if len(nums) != 4*2*4*4 {
		t.Fatalf("%d numbers", len(nums))
	}
	// A tall product (M > N) and a matrix-vector one (M = 1)
	nums = luaNumbers(t, rt, `
got = {}
for _, d in ipairs({ "float32", "float64" }) do
  local a, b = cuda.zeros({ 3, 2 }, d), cuda.zeros({ 2, 1 }, d)
  a[1][2], b[2][1] = 1, math.huge -- C = [inf; 0·inf; 0·inf]
  local c = cuda.full({ 3, 1 }, 5, d)
  kernels.matmul(c, a, b)
  for _, v in ipairs(c:reshape({ 3 }):to_table()) do got[#got + 1] = v end
  a, b = cuda.zeros({ 1, 2 }, d), cuda.zeros({ 2, 3 }, d)
  b[1][2] = -math.huge -- C = [0 0·-inf 0]
  c = cuda.full({ 1, 3 }, 5, d)
  kernels.matmul(c, a, b)
  for _, v in ipairs(c:reshape({ 3 }):to_table()) do got[#got + 1] = v end
end
`)
	for i := 0; i < len(nums); i += 6 {
		c := nums[i : i+6]
		if !math.IsInf(c[0], 1) || !math.IsNaN(c[1]) || !math.IsNaN(c[2]) || c[3] != 0 || !math.IsNaN(c[4]) || c[5] != 0 {
			t.Errorf("tall and flat products: C = %v and %v, want [+Inf NaN NaN] and [0 NaN 0]", c[:3], c[3:])
		}
	}
}
