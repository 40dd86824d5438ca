package runtime_test

import (
	"math"
	"testing"
)

// signedArray is a Lua function of the scripts below: an array of a
// shape and dtype of values drawn from SEED in [-1000, 1000), truncated
// for int32, and in [0, 256), truncated, for uint8.
const signedArray = `
cuda, kernels = require("cuda"), require("kernels")
function signed_array(shape, dtype)
  local x = cuda.rand(shape, "float32", SEED)
  if dtype == "uint8" then
    kernels.scale(x, 256)
  else
    kernels.scale(x, 2000)
    kernels.add_scalar(x, -1000)
  end
  if dtype == "float32" then return x end
  local y = cuda.device_array(shape, dtype)
  kernels.copy(y, x)
  x:free()
  return y
end
`

// kernels.map_reduce combines in an order that depends on the number of
// elements only, so the GPU gives the CPU evaluator's bits: for each
// named op and a function op, over sizes that leave a block's threads
// partly empty, end inside a thread's run (eight elements 256 apart, or
// eight groups of 16 bytes of the narrowest dtype), and fill exactly one
// block, in float32, float64, int32, float16 and uint8. A view one
// element in is not 16-byte aligned, so narrow dtypes take their groups
// one element at a time there, in the same order. A sum of each layout
// passes the largest grid (4096 blocks).
func TestGPUMapReduceGivesTheCPUBackendsBits(t *testing.T) {
	gpu, cpu := onGPUAndCPU(t, signedArray+`
got = {}
for _, n in ipairs({ 1, 3, 255, 300, 2047, 2048, 2049, 16385, 32768, 40000 }) do
  for _, dtype in ipairs({ "float32", "float64", "int32", "float16", "uint8" }) do
    local whole = signed_array(n + 1, dtype)
    for _, x in ipairs({ whole:rows(1, n), whole:rows(2, n + 1) }) do
      for _, op in ipairs({ "sum", "max", "min" }) do
        got[#got + 1] = kernels.map_reduce(function(v) return v end, op, x)
      end
      got[#got + 1] = kernels.map_reduce(function(v) return v end, function(a, b) return a + b end, x)
    end
    local other = signed_array(n, "float32")
    got[#got + 1] = kernels.map_reduce(function(v, w) return v * w end, "sum", whole:rows(1, n), other)
    whole:free()
    other:free()
  end
end
for _, big in ipairs({ { "float32", 2048 }, { "float16", 16384 }, { "uint8", 32768 } }) do
  local x = signed_array(4096 * big[2] + 300, big[1])
  got[#got + 1] = kernels.map_reduce(function(v) return v end, "sum", x)
  x:free()
end
`)
	for i := range gpu {
		if math.Float64bits(gpu[i]) != math.Float64bits(cpu[i]) {
			t.Errorf("result %d: the GPU gives %v, the CPU backend %v", i+1, gpu[i], cpu[i])
		}
	}
	if want := 10*5*9 + 3; len(gpu) != want {
		t.Fatalf("%d results, want %d", len(gpu), want)
	}
}

// An axis reduction's order depends on the shape only (jit.PlanAxis), so
// the GPU gives the CPU evaluator's bits too: both of its forms, with one
// segment and with several, ending inside a run and with warps whose
// lanes run out, for a named op and a function op. float32, float16 and
// uint8 threads of the outer form take two, four and eight columns, and
// lanes of the inner form two float16s and four uint8s of a row, loaded
// together where the rows keep them aligned (4096 and 256 columns; 70 for
// some) and one at a time otherwise (5, 3, 2: some threads' last
// columns, or values, are past the end; rows of 70 uint8s, every other
// one aligned; views one element in; rows of 256, too short for a lane's
// run of eight pairs or fours).
func TestGPUMapReduceAlongAnAxisGivesTheCPUBackendsBits(t *testing.T) {
	gpu, cpu := onGPUAndCPU(t, signedArray+`
got = {}
for _, shape in ipairs({ { 300, 2 }, { 2, 3000 }, { 37, 5 }, { 1000, 3 }, { 4096, 70 }, { 70, 4096 }, { 300, 256 } }) do
  for _, dtype in ipairs({ "float32", "float64", "int32", "float16", "uint8" }) do
    local x = signed_array(shape, dtype)
    for axis = 1, 2 do
      for _, op in ipairs({ "sum", "max", function(a, b) return a + b end }) do
        local r = kernels.map_reduce(function(v) return v * 3 end, op, x, { axis = axis }):to_table()
        for _, v in ipairs(r) do got[#got + 1] = v end
      end
    end
    x:free()
  end
end
for _, dtype in ipairs({ "float16", "uint8" }) do
  for _, shape in ipairs({ { 70, 4096 }, { 4096, 70 } }) do
    local n = shape[1] * shape[2]
    local whole = signed_array({ n + 1 }, dtype)
    local x = whole:rows(2, n + 1):reshape(shape)
    for axis = 1, 2 do
      local r = kernels.map_reduce(function(v) return v * 3 end, "sum", x, { axis = axis }):to_table()
      for _, v in ipairs(r) do got[#got + 1] = v end
    end
    whole:free()
  end
end
`)
	for i := range gpu {
		if math.Float64bits(gpu[i]) != math.Float64bits(cpu[i]) {
			t.Fatalf("result %d: the GPU gives %v, the CPU backend %v", i+1, gpu[i], cpu[i])
		}
	}
	if want := 5*3*(302+3002+42+1003+4166+4166+556) + 2*2*4166; len(gpu) != want {
		t.Fatalf("%d results, want %d", len(gpu), want)
	}
}

// An axis reduction's thread converts float16s without rebuilding NaN
// payloads where the words it loaded for a run hold no NaN, and as
// everywhere else where one does: sums and maxima along both axes of
// float16s with a few NaNs give the CPU backend's bits, NaNs' included
// (kernels/nan.go), float16 beside uint8 too, whose lanes load 8 bytes.
func TestGPUMapReduceAlongAnAxisOfFloat16sWithNaNsGivesTheCPUBackendsBits(t *testing.T) {
	gpu, cpu := onGPUAndCPU(t, signedArray+`
got = {}
for _, shape in ipairs({ { 300, 256 }, { 4096, 70 }, { 70, 4096 } }) do
  local x, b = signed_array(shape, "float16"), signed_array(shape, "uint8")
  x[7][9] = 0 / 0
  x[shape[1]][shape[2]] = -(0 / 0)
  x[2][shape[2] - 1] = 0 / 0
  for axis = 1, 2 do
    for _, op in ipairs({ "sum", "max" }) do
      local r = kernels.map_reduce(function(v) return v * 3 end, op, x, { axis = axis }):to_table()
      for _, v in ipairs(r) do got[#got + 1] = v end
    end
    local r = kernels.map_reduce(function(v, w) return v + w end, "sum", x, b, { axis = axis }):to_table()
    for _, v in ipairs(r) do got[#got + 1] = v end
  end
  x:free()
  b:free()
end
`)
	if want := 3 * (556 + 4166 + 4166); len(gpu) != want {
		t.Fatalf("%d results, want %d", len(gpu), want)
	}
	nans := 0
	for i := range gpu {
		if math.IsNaN(gpu[i]) {
			nans++
		}
		if math.Float64bits(gpu[i]) != math.Float64bits(cpu[i]) {
			t.Fatalf("result %d: the GPU gives %v (%#x), the CPU backend %v (%#x)", i+1,
				gpu[i], math.Float64bits(gpu[i]), cpu[i], math.Float64bits(cpu[i]))
		}
	}
	if nans == 0 {
		t.Fatal("no result is NaN: the NaNs were not read")
	}
}
