package jit

import (
	"math"
	"math/rand"
	"testing"

	"github.com/gluaproject/glua/device"
)

// axisReference is the reduction of v (rows×cols, row-major) along axis
// by combine, each result starting from its first value.
func axisReference(v []float64, rows, cols, axis int, combine func(a, b float64) float64) []float64 {
	m, length, ostride, kstride := AxisLayout(rows, cols, axis)
	out := make([]float64, m)
	for o := 0; o < m; o++ {
		for k := 0; k < length; k++ {
			x := v[o*ostride+k*kstride]
			if k == 0 {
				out[o] = x
			} else {
				out[o] = combine(out[o], x)
			}
		}
	}
	return out
}

// TestMapReduceAlongAnAxisAgreesWithAReference reduces x*y along each
// axis of random arrays of several shapes, by named ops and by functions,
// against plain Go loops: exact for integers, max and min, within
// rounding for float sums, which a second run gives to the bit.
func TestMapReduceAlongAnAxisAgreesWithAReference(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	type opCase struct {
		op      Reduction
		combine func(a, b float64) float64
	}
	fnSum, err := ParseMap(kernelTree(t, `return function(a, b) return a + b end`), "op.lua")
	if err != nil {
		t.Fatal(err)
	}
	fnAbsMax, err := ParseMap(kernelTree(t, `return function(a, b) local m = math.abs(a); if math.abs(b) > m then m = math.abs(b) end; return m end`), "op.lua")
	if err != nil {
		t.Fatal(err)
	}
	ops := []opCase{
		{Reduction{Name: "sum"}, func(a, b float64) float64 { return a + b }},
		{Reduction{Name: "max"}, math.Max},
		{Reduction{Name: "min"}, math.Min},
		{Reduction{Fn: fnSum}, func(a, b float64) float64 { return a + b }},
		{Reduction{Fn: fnAbsMax}, func(a, b float64) float64 { return math.Max(math.Abs(a), math.Abs(b)) }},
	}
	f, err := ParseMap(kernelTree(t, `return function(x, y) return x * y end`), "kernel.lua")
	if err != nil {
		t.Fatal(err)
	}
	shapes := [][2]int{{1, 1}, {300, 1}, {2, 300}, {37, 64}}
	if raceEnabled {
		// a block of ReduceBlock goroutines per result: a few results each way
		shapes = [][2]int{{1, 1}, {12, 1}, {2, 12}, {3, 5}}
	}
	for _, shape := range shapes {
		rows, cols := shape[0], shape[1]
		for _, d := range []device.DType{device.Float32, device.Float64, device.Int32} {
			x, y := randomArray(r, d, rows*cols), randomArray(r, d, rows*cols)
			v := make([]float64, rows*cols)
			for i := range v {
				v[i] = element(x, i) * element(y, i)
				if d == device.Float32 {
					v[i] = f32(v[i])
				}
			}
			sig := Signature{arr(d, 1), arr(d, 1)}
			for axis := 1; axis <= 2; axis++ {
				for k, c := range ops {
					acc, err := AccumulatorDType(f, sig, c.op)
					if err != nil {
						t.Fatal(err)
					}
					p, err := CheckMapReduceAxis(f, sig, c.op, acc, Options{})
					if err != nil {
						t.Fatal(err)
					}
					m, _, _, _ := AxisLayout(rows, cols, axis)
					run := func() HostArray {
						out := HostArray{DType: acc, Shape: []int{m}, Data: make([]byte, m*acc.Size())}
						if err := RunMapReduceAxis(p, rows, cols, axis, out, []any{x, y}); err != nil {
							t.Fatal(err)
						}
						return out
					}
					got, again := run(), HostArray{}
					if k == 0 || k == 3 {
						again = run() // the sums, whose value depends on the order
					}
					want := axisReference(v, rows, cols, axis, c.combine)
					if k == 4 && (axis == 1 && rows == 1 || axis == 2 && cols == 1) {
						want = v // one value per result: the function is never called
					}
					for o := range want {
						tol := 0.0
						if d.IsFloat() && (k == 0 || k == 3) {
							tol = 1e-12 * float64(rows+cols)
						}
						if g := element(got, o); math.Abs(g-want[o]) > tol*math.Max(1, math.Abs(want[o])) {
							t.Errorf("%s %dx%d axis %d op %s: result %d is %v, want %v", d, rows, cols, axis, c.op, o+1, g, want[o])
							break
						}
						if again.Data != nil && element(again, o) != element(got, o) {
							t.Errorf("%s %dx%d axis %d op %s: result %d differs on a second run", d, rows, cols, axis, c.op, o+1)
							break
						}
					}
				}
			}
		}
	}
}

// TestMapReduceAlongAnAxisStoresIntoOutsDType: float64 work stored into a
// float32 out rounds once, at the store.
func TestMapReduceAlongAnAxisStoresIntoOutsDType(t *testing.T) {
	f, err := ParseMap(kernelTree(t, `return function(x) return x end`), "kernel.lua")
	if err != nil {
		t.Fatal(err)
	}
	p, err := CheckMapReduceAxis(f, Signature{arr(device.Float64, 1)}, Reduction{Name: "sum"}, device.Float32, Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := HostArray{DType: device.Float64, Shape: []int{4}, Data: make([]byte, 32)}
	for i, v := range []float64{0.1, 0.2, 0.3, 0.4} {
		storeFloat(device.Float64, x.Data, i, v)
	}
	out := HostArray{DType: device.Float32, Shape: []int{2}, Data: make([]byte, 8)}
	if err := RunMapReduceAxis(p, 2, 2, 2, out, []any{x}); err != nil {
		t.Fatal(err)
	}
	if a, b := element(out, 0), element(out, 1); a != f32(0.1+0.2) || b != f32(0.3+0.4) {
		t.Errorf("got %v, %v; want %v, %v", a, b, f32(0.1+0.2), f32(0.3+0.4))
	}
}

func TestMapReduceAlongAnAxisTranslatesToOneKernel(t *testing.T) {
	f, err := ParseMap(kernelTree(t, `return function(x) return x * x end`), "kernel.lua")
	if err != nil {
		t.Fatal(err)
	}
	opFn, err := ParseMap(kernelTree(t, `return function(a, b) return math.max(a, b) end`), "op.lua")
	if err != nil {
		t.Fatal(err)
	}
	p, err := CheckMapReduceAxis(f, Signature{arr(device.Float32, 1)}, Reduction{Fn: opFn}, device.Float32, Options{})
	if err != nil {
		t.Fatal(err)
	}
	containsAll(t, CUDA(p), []string{
		"__device__ inline double glua_map_axis_fn_op(double l0_a, double l1_b) {",
		`extern "C" __global__ void glua_map_axis_fn(float* p_out, i64 p_out_n0, i64 l0_m, i64 l1_len, i64 l2_ostride, i64 l3_kstride, i64 l4_nblocks, float* p_in1, i64 p_in1_n0)`,
		"f1_i = ((i64)blockIdx.x + 1), f1_stop = l0_m, f1_step = l4_nblocks;",
		"f2_i = ((i64)threadIdx.x + 1), f2_stop = l1_len, f2_step = (256LL);",
		"l7_i = wrap_add(wrap_add(wrap_mul(wrap_sub(l5_o, (1LL)), l2_ostride), wrap_mul(wrap_sub(l6_k, (1LL)), l3_kstride)), (1LL));",
		"l9_acc = glua_map_axis_fn_op(l9_acc, ((double)(l8_x * l8_x)));",
		"if (((l10_lane <= (128LL)) && (wrap_add(((i64)threadIdx.x + 1), (128LL)) <= l1_len))) {",
		"p_out[(l5_o - 1)] = (float)(s0_tree[((1LL) - 1)]);",
		"__syncthreads();\n        }\n    }\n}",
	})
}
