package cuda_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/device"
)

// Small products run through a cuBLASLt plan kept per shape, large ones
// through cublasGemmEx; both agree with the float64 oracle, on every float
// dtype, transposed or not, batched with strides, and with operands that
// start off cuBLAS's preferred alignment.
func TestSmallProductsArePlannedAndCorrect(t *testing.T) {
	b := cudatest.Shared(t)
	rng := newRand(t)
	s := cudatest.Stream(t, b)
	before := b.PlannedShapes()
	checkGemm(t, b, rng.Float64, "planned 64x48x32", device.BFloat16, false, 1e-2, [3]int{64, 48, 32}, false, false, 1, 0, s)
	if b.PlannedShapes() <= before {
		t.Fatalf("a 64x48x32 product made no cuBLASLt plan (%d plans before and after)", before)
	}
	before = b.PlannedShapes()
	checkGemm(t, b, rng.Float64, "large 1024x1024x1040", device.BFloat16, false, 1e-2, [3]int{1024, 1024, 1040}, false, false, 1, 0, s)
	if b.PlannedShapes() != before {
		t.Error("a product of 2.2 GFLOP was planned; it should stay on cublasGemmEx")
	}
	for _, planned := range []bool{true, false} {
		restore := b.PlanSmallProducts(planned)
		t.Cleanup(restore)
		for _, p := range []struct {
			dt  device.DType
			tol float64
		}{{device.Float32, 1e-5}, {device.Float64, 1e-12}, {device.Float16, 1e-2}, {device.BFloat16, 1e-2}} {
			for _, shift := range []int{0, 1} {
				for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}} {
					name := fmt.Sprintf("planned=%v %s shift=%d trans=%v", planned, p.dt, shift, tr)
					checkBatchedGemm(t, b, rng.Float64, name, p.dt, p.tol, 3, [3]int{37, 29, 21}, tr[0], tr[1], shift, s)
				}
			}
		}
		restore()
	}
}

// checkBatchedGemm multiplies batch products C[i] = op(A[i])·op(B[i]) + C[i]/2
// whose operands start shift elements into their allocations, and
// compares each with the float64 oracle.
func checkBatchedGemm(t *testing.T, b *cuda.Backend, uniform func() float64, name string, dt device.DType, tol float64,
	batch int, shape [3]int, transA, transB bool, shift int, s device.Stream) {
	t.Helper()
	m, n, k := shape[0], shape[1], shape[2]
	rnd := func() float64 { return uniform()*2 - 1 }
	ar, ac, br, bc := storedShapes(shape, transA, transB)
	// Each operand is one allocation of batch matrices, a matrix and a
	// few elements apart, after shift leading elements.
	type operand struct {
		host       []byte
		p          device.Ptr
		ld, stride int
	}
	make3 := func(rows, cols int) operand {
		o := operand{ld: cols, stride: rows*cols + 5}
		o.host = make([]byte, (shift+batch*o.stride)*dt.Size())
		for i := range shift + batch*o.stride {
			device.Set(dt, o.host, i, rnd())
		}
		o.p = uploaded(t, b, o.host) + device.Ptr(shift*dt.Size())
		return o
	}
	at := func(o operand, bi, i, j int) float64 { return device.Get(dt, o.host, shift+bi*o.stride+i*o.ld+j) }
	A, B, C := make3(ar, ac), make3(br, bc), make3(m, n)
	err := b.Gemm(device.Gemm{
		DType: dt, TransA: transA, TransB: transB, M: m, N: n, K: k, Alpha: 1, Beta: 0.5,
		A: A.p, B: B.p, C: C.p, LDA: A.ld, LDB: B.ld, LDC: C.ld,
		Batch: batch, StrideA: A.stride, StrideB: B.stride, StrideC: C.stride, Stream: s,
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got := make([]byte, len(C.host))
	if err := b.Download(got, C.p-device.Ptr(shift*dt.Size()), s); err != nil {
		t.Fatal(err)
	}
	for bi := range batch {
		var diff, ref float64
		for i := range m {
			for j := range n {
				var sum float64
				for l := range k {
					var a, bb float64
					if transA {
						a = at(A, bi, l, i)
					} else {
						a = at(A, bi, i, l)
					}
					if transB {
						bb = at(B, bi, j, l)
					} else {
						bb = at(B, bi, l, j)
					}
					sum += a * bb
				}
				want := sum + 0.5*at(C, bi, i, j)
				g := device.Get(dt, got, shift+bi*C.stride+i*C.ld+j)
				diff += (g - want) * (g - want)
				ref += want * want
			}
		}
		if rel := math.Sqrt(diff / ref); !(rel <= tol) {
			t.Fatalf("%s: product %d: relative error %.3g exceeds %.0g", name, bi, rel, tol)
		}
		// The gap between two results is left alone.
		for i := m * n; i < C.stride && bi < batch-1; i++ {
			if g, w := device.Get(dt, got, shift+bi*C.stride+i), at(C, bi, 0, i); g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
				t.Fatalf("%s: element %d after product %d changed", name, i, bi)
			}
		}
	}
}
