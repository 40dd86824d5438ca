package jit

import (
	"math"
	"math/rand"
	"strings"
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
// rounding for float sums, which a second run gives to the bit. float32,
// float16 and uint8 threads of the outer form take two, four and eight
// results, some of them past the last (5 and 2 columns).
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
	// one value per result; one result; segments of the outer form
	// (300x2 along axis 1) and of the inner one (2x3000 along axis 2),
	// each ending inside a run; warps whose lanes run out (37x5)
	shapes := [][2]int{{1, 1}, {300, 1}, {300, 2}, {2, 3000}, {37, 5}, {37, 64}}
	if raceEnabled {
		// the inner form runs blocks of 256 goroutines
		shapes = [][2]int{{1, 1}, {12, 1}, {130, 2}, {2, 2100}, {3, 5}}
	}
	for _, shape := range shapes {
		rows, cols := shape[0], shape[1]
		for _, d := range []device.DType{device.Float32, device.Float64, device.Int32, device.Float16, device.Uint8} {
			x, y := randomArray(r, d, rows*cols), randomArray(r, d, rows*cols)
			v := make([]float64, rows*cols)
			for i := range v {
				v[i] = element(x, i) * element(y, i)
				if d == device.Float32 || d == device.Float16 {
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
					m, _, _, _ := AxisLayout(rows, cols, axis)
					run := func() HostArray {
						out := HostArray{DType: acc, Shape: []int{m}, Data: make([]byte, m*acc.Size())}
						if err := runAxis(t, f, sig, c.op, rows, cols, axis, out, []any{x, y}); err != nil {
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
	x := HostArray{DType: device.Float64, Shape: []int{4}, Data: make([]byte, 32)}
	for i, v := range []float64{0.1, 0.2, 0.3, 0.4} {
		storeFloat(device.Float64, x.Data, i, v)
	}
	out := HostArray{DType: device.Float32, Shape: []int{2}, Data: make([]byte, 8)}
	if err := runAxis(t, f, Signature{arr(device.Float64, 1)}, Reduction{Name: "sum"}, 2, 2, 2, out, []any{x}); err != nil {
		t.Fatal(err)
	}
	if a, b := element(out, 0), element(out, 1); a != f32(0.1+0.2) || b != f32(0.3+0.4) {
		t.Errorf("got %v, %v; want %v, %v", a, b, f32(0.1+0.2), f32(0.3+0.4))
	}
}

// runAxis plans an axis reduction of f over a rows×cols array, builds its
// kernels as the runtime does (the first storing into out's dtype when
// it has one segment, into partials of the accumulator's dtype
// otherwise) and runs them into out.
func runAxis(t *testing.T, f *Function, sig Signature, op Reduction, rows, cols, axis int, out HostArray, args []any) error {
	t.Helper()
	plan := PlanAxis(rows, cols, axis, sig)
	dst, err := AccumulatorDType(f, sig, op)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Segments == 1 {
		dst = out.DType
	}
	first, err := CheckMapReduceAxis(f, sig, op, dst, plan.AxisForm, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var second *Program
	if plan.Segments > 1 {
		second = AxisPartials(first, op, out.DType)
	}
	return RunMapReduceAxis(first, second, plan, out, args)
}

// TestPlanAxisCutsFewLongResultsIntoSegments: few results of many values
// are cut into segments that keep a GPU busy; many results, or short
// ones, are not; a result's values lie together (inner) when kstride is
// 1 and there are several. A thread of the outer form takes two results
// of float32s, four of float16s and eight of uint8s, so there are fewer
// threads to keep busy; a lane of the inner form two float16s and four
// uint8s of its result. A thread's
// run of values is cut short where a segment is too short for it.
func TestPlanAxisCutsFewLongResultsIntoSegments(t *testing.T) {
	f32 := Signature{arr(device.Float32, 1)}
	for _, c := range []struct {
		rows, cols, axis int
		sig              Signature
		want             AxisPlan
	}{
		{16384, 16384, 1, f32, AxisPlan{M: 16384, Len: 16384, Ostride: 1, Kstride: 16384, Segments: 16, SegLen: 1024, AxisForm: AxisForm{Width: 2, Run: 16}}},
		{16384, 16384, 2, f32, AxisPlan{M: 16384, Len: 16384, Ostride: 16384, Kstride: 1, Segments: 1, SegLen: 16384, AxisForm: AxisForm{Inner: true, Width: 1, Run: 8}}},
		{256, 1 << 20, 2, f32, AxisPlan{M: 256, Len: 1 << 20, Ostride: 1 << 20, Kstride: 1, Segments: 64, SegLen: 16384, AxisForm: AxisForm{Inner: true, Width: 1, Run: 8}}},
		{1 << 20, 256, 1, f32, AxisPlan{M: 256, Len: 1 << 20, Ostride: 1, Kstride: 256, Segments: 1024, SegLen: 1024, AxisForm: AxisForm{Width: 2, Run: 16}}},
		{1 << 20, 256, 2, f32, AxisPlan{M: 1 << 20, Len: 256, Ostride: 256, Kstride: 1, Segments: 1, SegLen: 256, AxisForm: AxisForm{Inner: true, Width: 1, Run: 8}}},
		{100, 3, 1, f32, AxisPlan{M: 3, Len: 100, Ostride: 1, Kstride: 3, Segments: 1, SegLen: 100, AxisForm: AxisForm{Width: 2, Run: 16}}},
		{5, 1, 2, f32, AxisPlan{M: 5, Len: 1, Ostride: 1, Kstride: 1, Segments: 1, SegLen: 1, AxisForm: AxisForm{Width: 2, Run: 1}}},
		{0, 4, 1, f32, AxisPlan{M: 4, Len: 0, Ostride: 1, Kstride: 4, Segments: 1, SegLen: 1, AxisForm: AxisForm{Width: 2, Run: 1}}},
		{16384, 16384, 1, Signature{arr(device.Float16, 1)}, AxisPlan{M: 16384, Len: 16384, Ostride: 1, Kstride: 16384, Segments: 32, SegLen: 512, AxisForm: AxisForm{Width: 4, Run: 16}}},
		{16384, 16384, 2, Signature{arr(device.Float16, 1)}, AxisPlan{M: 16384, Len: 16384, Ostride: 16384, Kstride: 1, Segments: 1, SegLen: 16384, AxisForm: AxisForm{Inner: true, Width: 2, Run: 8}}},
		// segments of a whole number of a lane's pairs: 100001/97 is 1030.9
		{64, 100001, 2, Signature{arr(device.BFloat16, 1)}, AxisPlan{M: 64, Len: 100001, Ostride: 100001, Kstride: 1, Segments: 97, SegLen: 1032, AxisForm: AxisForm{Inner: true, Width: 2, Run: 8}}},
		{1 << 20, 256, 1, Signature{arr(device.Uint8, 1), arr(device.Float64, 1)}, AxisPlan{M: 256, Len: 1 << 20, Ostride: 1, Kstride: 256, Segments: 4096, SegLen: 256, AxisForm: AxisForm{Width: 8, Run: 16}}},
		// a lane's whole run fits in short rows: four pairs of float16s, two
		// fours of uint8s, two float32s of rows of 100
		{1 << 20, 256, 2, Signature{arr(device.Float16, 1)}, AxisPlan{M: 1 << 20, Len: 256, Ostride: 256, Kstride: 1, Segments: 1, SegLen: 256, AxisForm: AxisForm{Inner: true, Width: 2, Run: 4}}},
		{1 << 20, 256, 2, Signature{arr(device.Uint8, 1)}, AxisPlan{M: 1 << 20, Len: 256, Ostride: 256, Kstride: 1, Segments: 1, SegLen: 256, AxisForm: AxisForm{Inner: true, Width: 4, Run: 2}}},
		{1000, 100, 2, f32, AxisPlan{M: 1000, Len: 100, Ostride: 100, Kstride: 1, Segments: 1, SegLen: 100, AxisForm: AxisForm{Inner: true, Width: 1, Run: 2}}},
	} {
		if got := PlanAxis(c.rows, c.cols, c.axis, c.sig); got != c.want {
			t.Errorf("%dx%d along axis %d: %+v, want %+v", c.rows, c.cols, c.axis, got, c.want)
		}
	}
	// 256 results of float16s, four a thread, take blocks of 64 threads:
	// a block of 256 would leave three quarters of it idle
	plan := PlanAxis(1<<20, 256, 1, Signature{arr(device.Float16, 1)})
	if grid, block := plan.Launch(); block != [3]int{64, 1, 1} || grid != [3]int{1, plan.Segments, 1} {
		t.Errorf("float16 over 1<<20 rows of 256: grid %v, block %v", grid, block)
	}
	plan = PlanAxis(1000, 3, 1, Signature{arr(device.Float32, 1)})
	if grid, block := plan.Launch(); block != [3]int{WarpSize, 1, 1} || grid != [3]int{1, plan.Segments, 1} {
		t.Errorf("float32 over 1000 rows of 3: grid %v, block %v", grid, block)
	}
}

func TestMapReduceAlongAnAxisTranslatesToTwoForms(t *testing.T) {
	f, err := ParseMap(kernelTree(t, `return function(x) return x * x end`), "kernel.lua")
	if err != nil {
		t.Fatal(err)
	}
	opFn, err := ParseMap(kernelTree(t, `return function(a, b) return math.max(a, b) end`), "op.lua")
	if err != nil {
		t.Fatal(err)
	}
	op := Reduction{Fn: opFn}
	inner, err := CheckMapReduceAxis(f, Signature{arr(device.Float32, 1)}, op, device.Float32, AxisForm{Inner: true, Width: 1, Run: axisChunk}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	containsAll(t, CUDA(inner), []string{
		"__device__ inline double glua_map_axis_fn_op(double l0_a, double l1_b) {",
		`extern "C" __global__ void glua_map_axis_fn(float* p_dst, i64 p_dst_n0, i64 l0_m, i64 l1_len, i64 l2_ostride, i64 l3_kstride, i64 l4_segments, i64 l5_seglen, float* p_in1, i64 p_in1_n0)`,
		// blocks along z take the segments, warps along y the results
		"f1_i = ((i64)blockIdx.z + 1), f1_stop = l4_segments, f1_step = ((i64)gridDim.z);",
		"f2_i = ((i64)blockIdx.y * blockDim.y + threadIdx.y + 1), f2_stop = l0_m, f2_step = ((i64)gridDim.y * blockDim.y);",
		// a lane's values are 32 apart, in runs of eight
		"f3_i = wrap_add(l8_k0, wrap_sub(((i64)threadIdx.x + 1), (1LL))), f3_stop = l9_k1, f3_step = (256LL);",
		"l11_k = wrap_add(l10_c, (224LL));",
		"l12_i = wrap_add(wrap_add(wrap_mul(wrap_sub(l6_o, (1LL)), l2_ostride), wrap_mul(wrap_sub(l11_k, (1LL)), l3_kstride)), (1LL));",
		"l14_acc = glua_map_axis_fn_op(l14_acc, ((double)(l13_x * l13_x)));",
		// the warp's tree, combining only lanes that had a value
		"l15_v = glua_shfl_down(l14_acc, (16LL));",
		"if (((((i64)threadIdx.x + 1) <= (16LL)) && (wrap_add(wrap_add(l8_k0, wrap_sub(((i64)threadIdx.x + 1), (1LL))), (16LL)) <= l9_k1))) {",
		"p_dst[(wrap_add(wrap_mul(wrap_sub(l7_s, (1LL)), l0_m), l6_o) - 1)] = (float)(l14_acc);",
	})
	if src := CUDA(inner); strings.Contains(src, "__syncthreads") || strings.Contains(src, "__shared__") {
		t.Error("the inner form uses a block's barrier or shared memory")
	}
	outer, err := CheckMapReduceAxis(f, Signature{arr(device.Float32, 1)}, op, device.Float64, AxisForm{Width: 1, Run: axisChunk}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := CUDA(outer)
	containsAll(t, src, []string{
		// blocks along y take the segments, threads along x the results
		"f1_i = ((i64)blockIdx.y + 1), f1_stop = l4_segments, f1_step = ((i64)gridDim.y);",
		"f2_i = ((i64)blockIdx.x * blockDim.x + threadIdx.x + 1), f2_stop = l0_m, f2_step = ((i64)gridDim.x * blockDim.x);",
		"f3_i = wrap_add(l8_k0, wrap_sub((1LL), (1LL))), f3_stop = l9_k1, f3_step = (8LL);",
		"l11_k = wrap_add(l10_c, (7LL));",
		"p_dst[(wrap_add(wrap_mul(wrap_sub(l7_s, (1LL)), l0_m), l6_o) - 1)] = (double)(l14_acc);",
	})
	if strings.Contains(src, "= glua_shfl_down(") {
		t.Error("the outer form shuffles")
	}
	containsAll(t, CUDA(AxisPartials(outer, op, device.Float32)), []string{
		`extern "C" __global__ void glua_map_axis_fn_partials(float* p_out, i64 p_out_n0, double* p_partials, i64 p_partials_n0, i64 l0_m, i64 l1_segments)`,
		"l4_acc = glua_map_axis_fn_op(l4_acc, p_partials[(wrap_add(wrap_mul(wrap_sub(l3_s, (1LL)), l0_m), l2_o) - 1)]);",
		// a warp per result, its lanes taking segments 32 apart
		"f1_i = ((i64)blockIdx.y * blockDim.y + threadIdx.y + 1), f1_stop = l0_m, f1_step = ((i64)gridDim.y * blockDim.y);",
		"f2_i = ((i64)threadIdx.x + 1), f2_stop = l1_segments, f2_step = (32LL);",
		"l5_v = glua_shfl_down(l4_acc, (16LL));",
		"p_out[(l2_o - 1)] = (float)(l4_acc);",
	})
}

// A float16 thread of the outer form takes four neighbouring results
// and, where the layout and the pointer allow, loads a row's four values
// as one 8-byte word, sixteen rows at a time; its other results are
// combined and stored only where there are some.
func TestMapReduceAlongAnAxisOfFloat16LoadsFourColumnsAtOnce(t *testing.T) {
	f, err := ParseMap(kernelTree(t, `return function(x) return x end`), "kernel.lua")
	if err != nil {
		t.Fatal(err)
	}
	sig := Signature{arr(device.Float16, 1)}
	plan := PlanAxis(16384, 16384, 1, sig)
	first, err := CheckMapReduceAxis(f, sig, Reduction{Name: "sum"}, device.Float32, plan.AxisForm, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Width != 4 || plan.Run != 16 || first.AxisGroups == nil || first.AxisGroups.Width != 4 {
		t.Fatalf("the plan's form %+v, the program's groups %+v", plan.AxisForm, first.AxisGroups)
	}
	containsAll(t, CUDA(first), []string{
		// threads along x take four results each
		"f2_i = wrap_add(wrap_mul(wrap_sub(((i64)blockIdx.x * blockDim.x + threadIdx.x + 1), (1LL)), (4LL)), (1LL)), f2_stop = l0_m, f2_step = wrap_mul(((i64)gridDim.x * blockDim.x), (4LL));",
		"if (l6_o + 3 <= l0_m && l2_ostride == 1 && l3_kstride % 4 == 0 && ((u64)p_in1 & 7) == 0) {",
		"union { u64 w[1]; u16 e[4]; } glua_in1_15;",
		"l13_x = f16_to_f32(glua_in1_15.e[3]);",
		"l17_acc = (l17_acc + ((double)l13_x));",
		// one at a time, the other results only where there are some
		"if ((wrap_add(l6_o, (3LL)) <= l0_m)) {",
		"p_dst[(wrap_add(wrap_mul(wrap_sub(l7_s, (1LL)), l0_m), wrap_add(l6_o, (3LL))) - 1)] = (float)(l17_acc);",
	})
	if strings.Contains(CUDA(first), "F16Plain::load") {
		t.Error("the outer form's runs convert float16s without NaN repair")
	}
	if grid, _ := plan.Launch(); grid[0] != 16384/4/ReduceBlock || grid[1] != plan.Segments {
		t.Errorf("grid %v for %d segments", grid, plan.Segments)
	}
}

// A float16 lane of the inner form takes two neighbouring values of its
// row at a time and, where the run starts an even number of elements in
// and the pointer allows, loads them as one 4-byte word, converted
// without NaN repair where none of the run's words holds a NaN; the
// second of the last pair is taken only where there is one, and the
// warp's tree counts a lane's values in pairs.
func TestMapReduceAlongAnAxisOfFloat16LoadsPairsOfARowsValues(t *testing.T) {
	f, err := ParseMap(kernelTree(t, `return function(x) return x end`), "kernel.lua")
	if err != nil {
		t.Fatal(err)
	}
	opFn, err := ParseMap(kernelTree(t, `return function(a, b) return a + b end`), "op.lua")
	if err != nil {
		t.Fatal(err)
	}
	sig := Signature{arr(device.Float16, 1)}
	plan := PlanAxis(16384, 16384, 2, sig)
	first, err := CheckMapReduceAxis(f, sig, Reduction{Fn: opFn}, device.Float32, plan.AxisForm, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Inner || plan.Width != 2 || first.AxisGroups == nil || !first.AxisGroups.Inner {
		t.Fatalf("the plan %+v, the program's groups %+v", plan, first.AxisGroups)
	}
	containsAll(t, CUDA(first), []string{
		// lane j starts 2(j-1) values in; the warp steps 64 values
		"f3_i = wrap_add(l8_k0, wrap_mul(wrap_sub(((i64)threadIdx.x + 1), (1LL)), (2LL))), f3_stop = l9_k1, f3_step = (512LL);",
		"if ((wrap_add(wrap_add(l10_c, (448LL)), (1LL)) <= l9_k1)) {",
		"if (l3_kstride == 1 && (wrap_add(wrap_add(wrap_mul(wrap_sub(l6_o, (1LL)), l2_ostride), wrap_mul(wrap_sub(l10_c, (1LL)), l3_kstride)), (1LL)) - 1) % 2 == 0 && ((u64)p_in1 & 3) == 0) {",
		"union { u32 w[1]; u16 e[2]; } glua_in1_7;",
		"if (((((glua_in1_0.w[0] & 0x7fff7fffu) + 0x03ff03ffu) | ((glua_in1_1.w[0] & 0x7fff7fffu) + 0x03ff03ffu) |",
		"l13_x = F16Plain::load(glua_in1_7.e[1]);",
		"l13_x = f16_to_f32(glua_in1_7.e[1]);",
		// one at a time, the second of a pair only where there is one
		"if ((wrap_add(l11_k, (1LL)) <= l9_k1)) {",
		// lane j + 16's first value is 32 after lane j's
		"(wrap_add(wrap_add(l8_k0, wrap_mul(wrap_sub(((i64)threadIdx.x + 1), (1LL)), (2LL))), (32LL)) <= l9_k1)",
	})
}
