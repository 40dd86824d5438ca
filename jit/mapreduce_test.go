package jit

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

func mapReduce(t *testing.T, src, op string, n int, sig Signature, args []any) float64 {
	t.Helper()
	f, err := ParseMap(kernelTree(t, src), "kernel.lua")
	if err != nil {
		t.Fatal(err)
	}
	first, err := CheckMapReduce(f, sig, Reduction{Name: op}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := RunMapReduce(first, ReducePartials(first, Reduction{Name: op}), n, args)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// fewBlocks lowers the first kernel's largest grid to 8 blocks for the
// test, so that arrays of a few hundred thousand elements pass it in
// every layout.
func fewBlocks(t *testing.T) {
	reduceMaxBlocks = 8
	t.Cleanup(func() { reduceMaxBlocks = ReduceMaxBlocks })
}

// TestMapReduceAgreesWithAReference reduces x*y (and |x - y|) over
// random arrays of several sizes, each op, against plain Go loops: exact
// for integers, max and min; within rounding for float sums. float16 and
// uint8 take groups of consecutive elements (ReduceRuns); the largest
// sizes pass the grid (fewBlocks).
func TestMapReduceAgreesWithAReference(t *testing.T) {
	fewBlocks(t)
	r := rand.New(rand.NewSource(3))
	sizes := []int{1, 255, 1000, 70000, 300000}
	if raceEnabled {
		sizes = []int{1, 255, 1000, 2000}
	}
	for _, n := range sizes {
		for _, d := range []device.DType{device.Float32, device.Float64, device.Int32, device.Float16, device.Uint8} {
			x, y := randomArray(r, d, n), randomArray(r, d, n)
			sig := Signature{arr(d, 1), arr(d, 1)}
			for _, op := range []string{"sum", "max", "min", "prod"} {
				if n > 70000 && op != "sum" {
					continue // once is enough for the CPU's time
				}
				src := `return function(x, y) return x * y end`
				if op == "prod" {
					// factors near 1, so that the product neither overflows nor vanishes
					src = `return function(x, y) return 1 + (x - y) / 1000000 end`
				}
				want := map[string]float64{"sum": 0, "prod": 1, "max": math.Inf(-1), "min": math.Inf(1)}[op]
				for i := 0; i < n; i++ {
					a, b := element(x, i), element(y, i)
					v := a * b
					if op == "prod" {
						v = 1 + (a-b)/1000000
					}
					if d == device.Float32 || d == device.Float16 {
						v = f32(a * b)
						if op == "prod" {
							v = f32(1 + f32(f32(a-b)/1000000))
						}
					}
					switch op {
					case "sum":
						want += v
					case "prod":
						want *= v
					case "max":
						want = math.Max(want, v)
					case "min":
						want = math.Min(want, v)
					}
				}
				got := mapReduce(t, src, op, n, sig, []any{x, y})
				tol := 0.0
				if op == "prod" || d.IsFloat() && op == "sum" {
					tol = 1e-9 * float64(n)
				}
				if math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
					t.Errorf("%s %s of %d: got %v, want %v", d, op, n, got, want)
				}
				if again := mapReduce(t, src, op, n, sig, []any{x, y}); again != got {
					t.Errorf("%s %s of %d: a second run gave %v, the first %v", d, op, n, again, got)
				}
			}
		}
	}
}

func TestMapReduceTranslatesToTwoTreeKernels(t *testing.T) {
	f, err := ParseMap(kernelTree(t, `return function(x) return x * x end`), "kernel.lua")
	if err != nil {
		t.Fatal(err)
	}
	first, err := CheckMapReduce(f, Signature{arr(device.Float32, 1)}, Reduction{Name: "sum"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	containsAll(t, CUDA(first), []string{
		`extern "C" __global__ void glua_map_sum(double* p_partials, i64 p_partials_n0, i64 l0_n, float* p_in1, i64 p_in1_n0)`,
		"__shared__ double s0_tree[256];",
		"__syncthreads();",
		"p_partials[(((i64)blockIdx.x + 1) - 1)] = (double)(s0_tree[((1LL) - 1)]);",
	})
	containsAll(t, CUDA(ReducePartials(first, Reduction{Name: "sum"})), []string{
		`extern "C" __global__ void glua_map_sum_partials(double* p_result, i64 p_result_n0, double* p_partials, i64 p_partials_n0)`,
		"for (; f1_i <= f1_stop; f1_i += f1_step)",
	})
}

// A map_reduce over float16 and uint8 takes groups of 16 bytes of the
// narrowest array, each group's elements consecutive and the groups a
// block's width apart, and loads them as 16-byte vectors where every
// pointer is 16-byte aligned, one element at a time otherwise; wider
// arrays keep single elements 256 apart.
func TestMapReduceOfNarrowDTypesLoadsGroupsAsVectors(t *testing.T) {
	f, err := ParseMap(kernelTree(t, `return function(x, y) return x * y end`), "kernel.lua")
	if err != nil {
		t.Fatal(err)
	}
	first, err := CheckMapReduce(f, Signature{arr(device.Uint8, 1), arr(device.Float32, 1)}, Reduction{Name: "sum"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	per := 16 * narrowGroups * ReduceBlock
	if r := first.Runs; r.Lanes != 16 || r.Groups != narrowGroups || ReduceGrid(first, per*ReduceMaxBlocks+1) != ReduceMaxBlocks || ReduceGrid(first, per+1) != 2 {
		t.Errorf("uint8 runs: %d lanes, %d groups, grids %d and %d", r.Lanes, r.Groups, ReduceGrid(first, per*ReduceMaxBlocks+1), ReduceGrid(first, per+1))
	}
	containsAll(t, CUDA(first), []string{
		"if ((((u64)p_in1 | (u64)p_in2) & 15) == 0) {",
		"union { v16 v[8]; u8 e[128]; } glua_in1;",
		"union { v16 v[32]; float e[128]; } glua_in2;",
		// group 2 of the float32s: 16 lanes, 4096 elements on
		"glua_in2.v[4] = ((const v16*)(p_in2 + (l5_c - 1) + 4096))[0];",
		"glua_in2.v[7] = ((const v16*)(p_in2 + (l5_c - 1) + 4096))[3];",
		"l1_i = wrap_add(l5_c, (4096LL));",
		"l2_x = (i64)glua_in1.e[16];",
		"l2_x = (i64)glua_in1.e[127];",
		// the fallback and the last run, one element at a time
		"l2_x = (i64)p_in1[(l1_i - 1)];",
	})
	wide, err := CheckMapReduce(f, Signature{arr(device.Float32, 1), arr(device.Float32, 1)}, Reduction{Name: "sum"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := wide.Runs; r.Lanes != 1 || r.Groups != ReduceChunk || r.Whole != nil || strings.Contains(CUDA(wide), "v16 v[") {
		t.Errorf("float32 runs: %d lanes, %d groups, or vector loads", r.Lanes, r.Groups)
	}
}

// mapReduceBy is mapReduce with a function op, given as source.
func mapReduceBy(t *testing.T, src, opSrc string, n int, sig Signature, args []any) (float64, *Program) {
	t.Helper()
	f, err := ParseMap(kernelTree(t, src), "kernel.lua")
	if err != nil {
		t.Fatal(err)
	}
	opFn, err := ParseMap(kernelTree(t, opSrc), "op.lua")
	if err != nil {
		t.Fatal(err)
	}
	op := Reduction{Fn: opFn}
	first, err := CheckMapReduce(f, sig, op, Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := RunMapReduce(first, ReducePartials(first, op), n, args)
	if err != nil {
		t.Fatal(err)
	}
	return v, first
}

// TestMapReduceByAFunctionAgreesWithAReference combines x*y by Lua
// functions (a sum, a max written with locals and an if, the largest
// magnitude) over sizes that leave lanes, blocks and partials empty,
// against plain Go loops: exact for integers and for the max and the
// largest magnitude, within rounding for float sums.
func TestMapReduceByAFunctionAgreesWithAReference(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	ops := []struct {
		src  string
		want func(acc, v float64) float64
	}{
		{`return function(a, b) return a + b end`, func(acc, v float64) float64 { return acc + v }},
		{`return function(acc, v) local m = acc; if v > m then m = v end; return m end`, math.Max},
		{`return function(a, b) return math.max(math.abs(a), math.abs(b)) end`, func(acc, v float64) float64 { return math.Max(math.Abs(acc), math.Abs(v)) }},
	}
	fewBlocks(t)
	sizes := []int{1, 2, 255, 257, 1000, 70000, 300000}
	if raceEnabled {
		sizes = []int{1, 2, 255, 257, 1000, 2000}
	}
	for _, n := range sizes {
		for _, d := range []device.DType{device.Float32, device.Float64, device.Int32, device.Uint8} {
			if n >= 70000 && d != device.Int32 && d != device.Uint8 {
				continue // past the grid (fewBlocks); once is enough for the CPU's time
			}
			x, y := randomArray(r, d, n), randomArray(r, d, n)
			sig := Signature{arr(d, 1), arr(d, 1)}
			for k, op := range ops {
				want := 0.0
				for i := 0; i < n; i++ {
					a, b := element(x, i), element(y, i)
					v := a * b
					if d == device.Float32 {
						v = f32(v)
					}
					if i == 0 {
						want = v // a thread's first value, not op(identity, v)
						if k == 2 && n > 1 {
							want = math.Abs(v) // op(op(v0, v1), ...) is |v0| at the first combination
						}
						continue
					}
					want = op.want(want, v)
				}
				got, first := mapReduceBy(t, `return function(x, y) return x * y end`, op.src, n, sig, []any{x, y})
				tol := 0.0
				if d.IsFloat() && k == 0 {
					tol = 1e-9 * float64(n)
				}
				if math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
					t.Errorf("%s op %d of %d: got %v, want %v", d, k, n, got, want)
				}
				if wantD := map[bool]device.DType{true: device.Int64, false: device.Float64}[!d.IsFloat()]; first.Params[0].Array.DType != wantD {
					t.Errorf("%s op %d: partials are %s, want %s", d, k, first.Params[0].Array.DType, wantD)
				}
				if again, _ := mapReduceBy(t, `return function(x, y) return x * y end`, op.src, n, sig, []any{x, y}); again != got {
					t.Errorf("%s op %d of %d: a second run gave %v, the first %v", d, k, n, again, got)
				}
			}
		}
	}
}

// TestMapReduceByAFunctionOfFloatsCombinesIntegersAsFloats: an op that
// returns a float for integer values makes the accumulator float64.
func TestMapReduceByAFunctionOfFloatsCombinesIntegersAsFloats(t *testing.T) {
	x := HostArray{DType: device.Int32, Shape: []int{3}, Data: make([]byte, 12)}
	for i, v := range []float64{1, 2, 3} {
		storeFloat(device.Int32, x.Data, i, v)
	}
	// ((1 + 2/2) + 3/2) in one thread's order: 3.5
	got, first := mapReduceBy(t, `return function(x) return x end`, `return function(a, b) return a + b / 2 end`, 3, Signature{arr(device.Int32, 1)}, []any{x})
	if got != 3.5 || first.Params[0].Array.DType != device.Float64 {
		t.Errorf("got %v in %s partials, want 3.5 in float64", got, first.Params[0].Array.DType)
	}
}

func TestMapReduceRefusesABadFunctionOp(t *testing.T) {
	f, err := ParseMap(kernelTree(t, `return function(x) return x end`), "kernel.lua")
	if err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]string{
		`return function(a) return a end`:                            "the op function takes two values",
		`return function(a, b, c) return a + b end`:                  "takes 3",
		`return function(a, b) return a < b end`:                     "returns a number, not a boolean",
		`return function(a, b) local s = 0; s = s + a; return s end`: "cannot take a float64",
	} {
		opFn, err := ParseMap(kernelTree(t, src), "op.lua")
		if err != nil {
			t.Fatal(err)
		}
		_, err = CheckMapReduce(f, Signature{arr(device.Float32, 1)}, Reduction{Fn: opFn}, Options{})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "op.lua:1") {
			t.Errorf("%s: got %v, want an error at op.lua:1 containing %q", src, err, want)
		}
	}
	first, err := CheckMapReduce(f, Signature{arr(device.Float32, 1)}, Reduction{Name: "mean"}, Options{})
	if err == nil || first != nil {
		t.Error("an unknown op name was accepted")
	}
}

// TestMapReduceByAFunctionTranslatesToADeviceFunction: the op is one
// __device__ function in each of the two kernels, called by the
// accumulation and the tree, and the tree combines only lanes that hold a
// value; no identity appears.
func TestMapReduceByAFunctionTranslatesToADeviceFunction(t *testing.T) {
	f, err := ParseMap(kernelTree(t, `return function(x) return x * x end`), "kernel.lua")
	if err != nil {
		t.Fatal(err)
	}
	opFn, err := ParseMap(kernelTree(t, `return function(a, b) return math.max(math.abs(a), b) end`), "op.lua")
	if err != nil {
		t.Fatal(err)
	}
	op := Reduction{Fn: opFn}
	first, err := CheckMapReduce(f, Signature{arr(device.Float32, 1)}, op, Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := CUDA(first)
	containsAll(t, src, []string{
		"__device__ inline double glua_map_fn_op(double l0_a, double l1_b) {\n    return lua_max(lua_abs(l0_a), l1_b);\n}",
		`extern "C" __global__ void glua_map_fn(double* p_partials, i64 p_partials_n0, i64 l0_n, float* p_in1, i64 p_in1_n0)`,
		// a thread's first value is its first element
		"if ((l1_i == wrap_add(wrap_mul(wrap_sub(((i64)blockIdx.x + 1), (1LL)), (2048LL)), wrap_add(((i64)threadIdx.x + 1), (0LL))))) {",
		"l3_acc = ((double)(l2_x * l2_x));",
		"l3_acc = glua_map_fn_op(l3_acc, ((double)(l2_x * l2_x)));",
		// lane j + 128 has a value when its first element is within n
		"if (((l5_lane <= (128LL)) && (wrap_add(wrap_mul(wrap_sub(((i64)blockIdx.x + 1), (1LL)), (2048LL)), wrap_add(((i64)threadIdx.x + 1), (128LL))) <= l0_n))) {",
		// a block's thread takes elements 256 apart
		"l1_i = wrap_add(l4_c, (1792LL));",
		"s0_tree[(l5_lane - 1)] = (double)(glua_map_fn_op(s0_tree[(l5_lane - 1)], s0_tree[(wrap_add(l5_lane, (128LL)) - 1)]));",
	})
	if strings.Contains(src, "0xfff0000000000000") || strings.Contains(src, "l3_acc = (0e+00)") {
		t.Error("a function op starts from an identity")
	}
	second := CUDA(ReducePartials(first, op))
	containsAll(t, second, []string{
		"__device__ inline double glua_map_fn_op(double l0_a, double l1_b) {",
		"if (((l2_lane <= (1LL)) && (wrap_add(((i64)threadIdx.x + 1), (1LL)) <= ((i64)p_partials_n0)))) {",
		"l1_acc = glua_map_fn_op(l1_acc, p_partials[(l0_i - 1)]);",
	})
}
