package jit

import (
	"math"
	"math/rand"
	"testing"

	"github.com/gluaproject/glua/device"
)

func mapReduce(t *testing.T, src, op string, n int, sig Signature, args []any) float64 {
	t.Helper()
	f, err := ParseMap(kernelTree(t, src), "kernel.lua")
	if err != nil {
		t.Fatal(err)
	}
	first, err := CheckMapReduce(f, sig, op, Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := RunMapReduce(first, ReducePartials(first, op), n, args)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMapReduceAgreesWithAReference reduces x*y (and |x - y|) over
// random arrays of several sizes, each op, against plain Go loops: exact
// for integers, max and min; within rounding for float sums.
func TestMapReduceAgreesWithAReference(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, n := range []int{1, 255, 1000, 70000, 300000} {
		for _, d := range []device.DType{device.Float32, device.Float64, device.Int32} {

			x, y := randomArray(r, d, n), randomArray(r, d, n)
			sig := Signature{arr(d, 1), arr(d, 1)}
			for _, op := range []string{"sum", "max", "min", "prod"} {
				if n > 70000 && (d != device.Int32 || op != "sum") {
					continue // past ReduceMaxBlocks blocks; once is enough for the CPU's time
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
					if d == device.Float32 {
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
	first, err := CheckMapReduce(f, Signature{arr(device.Float32, 1)}, "sum", Options{})
	if err != nil {
		t.Fatal(err)
	}
	containsAll(t, CUDA(first), []string{
		`extern "C" __global__ void glua_map_sum(double* p_partials, i64 p_partials_n0, i64 l0_n, float* p_in1, i64 p_in1_n0)`,
		"__shared__ double s0_tree[256];",
		"__syncthreads();",
		"p_partials[(((i64)blockIdx.x + 1) - 1)] = (double)(s0_tree[((1LL) - 1)]);",
	})
	containsAll(t, CUDA(ReducePartials(first, "sum")), []string{
		`extern "C" __global__ void glua_map_sum_partials(double* p_result, i64 p_result_n0, double* p_partials, i64 p_partials_n0)`,
		"for (; f1_i <= f1_stop; f1_i += f1_step)",
	})
}
