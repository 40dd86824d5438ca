package runtime_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/gputest"
	"github.com/gluaproject/glua/internal/numpytest"
	"github.com/gluaproject/glua/runtime"
)

// newCUDA is a runtime on the GPU, closed when the test ends; without
// one the test skips, or fails under GLUA_REQUIRE_CUDA=1.
func newCUDA(t *testing.T) *runtime.Runtime { return gputest.Runtime(t) }

// relError is ‖x − y‖ / ‖y‖ over two arrays' elements; NaN never passes
// a comparison with it.
func relError(t *testing.T, x, y *runtime.Array) float64 {
	t.Helper()
	xs, err := x.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	ys, err := y.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	var d, n float64
	for i := range ys {
		d += (xs[i] - ys[i]) * (xs[i] - ys[i])
		n += ys[i] * ys[i]
	}
	return math.Sqrt(d) / math.Max(math.Sqrt(n), math.SmallestNonzeroFloat64)
}

// bmmCase is one batched product: the inputs' files, the options, and
// the file of NumPy's answer.
type bmmCase struct {
	c, a, b, want string
	o             runtime.MatmulOptions
}

func TestBatchedMatmulMatchesNumPy(t *testing.T) {
	dir := t.TempDir()
	numpytest.Run(t, `
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng()
def save(name, x):
    np.save(d + "/" + name + ".npy", x)
A = rng.uniform(-1, 1, (4, 6, 5)); save("A", A)
B = rng.uniform(-1, 1, (4, 5, 3)); save("B", B)
C = rng.uniform(-1, 1, (4, 6, 3)); save("C", C)
A2 = rng.uniform(-1, 1, (6, 5)); save("A2", A2); save("A1", A2[np.newaxis])
B2 = rng.uniform(-1, 1, (5, 3)); save("B2", B2)
At = np.ascontiguousarray(np.swapaxes(A, 1, 2)); save("At", At)
Bt = np.ascontiguousarray(np.swapaxes(B, 1, 2)); save("Bt", Bt)
save("plain", A @ B)
save("scaled", 0.5 * (A2 @ B) + 2 * C)
save("trans_a", np.swapaxes(At, 1, 2) @ B2)
save("trans_b", -(A @ np.swapaxes(Bt, 1, 2)) + C)
`, dir)
	cases := []bmmCase{
		{"C", "A", "B", "plain", runtime.MatmulOptions{}},
		{"C", "A2", "B", "scaled", runtime.MatmulOptions{Alpha: 0.5, AlphaSet: true, Beta: 2}},
		{"C", "A1", "B", "scaled", runtime.MatmulOptions{Alpha: 0.5, AlphaSet: true, Beta: 2}},
		{"C", "At", "B2", "trans_a", runtime.MatmulOptions{TransA: true}},
		{"C", "A", "Bt", "trans_b", runtime.MatmulOptions{Alpha: -1, AlphaSet: true, Beta: 1, TransB: true}},
	}
	rt := newCPU(t, runtime.Options{})
	for _, dt := range []device.DType{device.Float64, device.Float32, device.Float16} {
		load := func(name string) *runtime.Array {
			h, err := rt.LoadNPY(filepath.Join(dir, name+".npy"), runtime.NPYOptions{})
			if err != nil {
				t.Fatal(err)
			}
			v, err := h.Float64s()
			if err != nil {
				t.Fatal(err)
			}
			if h, err = runtime.HostArrayFromFloats(v, h.Shape(), dt); err != nil {
				t.Fatal(err)
			}
			d, err := rt.ToDevice(h)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		tol := map[device.DType]float64{device.Float64: 1e-12, device.Float32: 1e-5, device.Float16: 1e-2}[dt]
		for _, c := range cases {
			C, A, B, want := load(c.c), load(c.a), load(c.b), load(c.want)
			if err := rt.Matmul(C, A, B, c.o); err != nil {
				t.Fatalf("%s %s: %v", dt, c.want, err)
			}
			if r := relError(t, C, want); !(r < tol) {
				t.Errorf("%s %s: relative error %g against NumPy, over %g", dt, c.want, r, tol)
			}
		}
	}
}

// bmmShapes is the stored shapes of a batch of m×k·k×n products under o,
// A or B shared (2-D) when asked.
func bmmShapes(batch, m, k, n int, o runtime.MatmulOptions, aShared, bShared bool) (a, b, c []int) {
	a, b = []int{m, k}, []int{k, n}
	if o.TransA {
		a = []int{k, m}
	}
	if o.TransB {
		b = []int{n, k}
	}
	if !aShared {
		a = append([]int{batch}, a...)
	}
	if !bShared {
		b = append([]int{batch}, b...)
	}
	return a, b, []int{batch, m, n}
}

// The GPU's batched products (cuBLAS's strided-batched GEMM) agree with
// the CPU backend's on fresh random inputs, for every float dtype, each
// transpose, alpha and beta, a shared operand, and the benchmark's shapes.
func TestBatchedMatmulOnTheGPUMatchesTheCPU(t *testing.T) {
	gpu := newCUDA(t)
	cpuRT := newCPU(t, runtime.Options{})
	tolerance := map[device.DType]float64{device.Float32: 1e-5, device.Float64: 1e-12, device.Float16: 1e-2, device.BFloat16: 1e-2}
	type shape struct{ batch, m, k, n int }
	run := func(name string, dt device.DType, s shape, o runtime.MatmulOptions, aShared, bShared bool) {
		as, bs, cs := bmmShapes(s.batch, s.m, s.k, s.n, o, aShared, bShared)
		hosts := []*runtime.HostArray{randomHost(t, as, dt), randomHost(t, bs, dt), randomHost(t, cs, dt)}
		var results [2]*runtime.Array
		for i, rt := range []*runtime.Runtime{cpuRT, gpu} {
			var ABC [3]*runtime.Array // the same inputs on both
			for j, h := range hosts {
				a, err := rt.ToDevice(h)
				if err != nil {
					t.Fatal(err)
				}
				defer a.Free()
				ABC[j] = a
			}
			if err := rt.Matmul(ABC[2], ABC[0], ABC[1], o); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			results[i] = ABC[2]
		}
		tol := tolerance[dt]
		if o.Precision == "tf32" {
			tol = 5e-3
		}
		h, err := results[1].CopyToHost(nil)
		if err != nil {
			t.Fatal(err)
		}
		fromGPU, err := cpuRT.ToDevice(h)
		if err != nil {
			t.Fatal(err)
		}
		defer fromGPU.Free()
		if r := relError(t, fromGPU, results[0]); !(r < tol) {
			t.Errorf("%s: the GPU's product differs from the CPU's by %g (tolerance %g)", name, r, tol)
		}
	}
	for _, dt := range []device.DType{device.Float32, device.Float64, device.Float16, device.BFloat16} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				o := runtime.MatmulOptions{TransA: ta, TransB: tb, Alpha: 0.75, AlphaSet: true, Beta: 0.5}
				s := shape{5 + rand.IntN(4), 17 + rand.IntN(16), 9 + rand.IntN(40), 7 + rand.IntN(24)}
				for _, shared := range [][2]bool{{false, false}, {true, false}, {false, true}} {
					run(fmt.Sprintf("%s %v ta=%v tb=%v shared=%v", dt, s, ta, tb, shared), dt, s, o, shared[0], shared[1])
				}
			}
		}
	}
	run("float32 tf32", device.Float32, shape{6, 64, 128, 32}, runtime.MatmulOptions{Precision: "tf32"}, false, false)
	for _, dt := range []device.DType{device.Float32, device.BFloat16} {
		run(fmt.Sprintf("%s 1024x64x64", dt), dt, shape{1024, 64, 64, 64}, runtime.MatmulOptions{}, false, false)
		run(fmt.Sprintf("%s 4x512x512", dt), dt, shape{4, 512, 512, 512}, runtime.MatmulOptions{}, false, false)
	}
}
