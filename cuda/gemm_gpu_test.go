package cuda_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/device"
)

// matrix is a row-major matrix stored as dt with row stride ld (≥ cols).
type matrix struct {
	dt         device.DType
	rows, cols int
	ld         int
	host       []byte // rows*ld elements
}

func (m *matrix) at(i, j int) float64 { return device.Get(m.dt, m.host, i*m.ld+j) }

func randomMatrix(t *testing.T, b *cuda.Backend, dt device.DType, rows, cols, pad int, fill func() float64) (*matrix, device.Ptr) {
	t.Helper()
	m := &matrix{dt: dt, rows: rows, cols: cols, ld: cols + pad, host: make([]byte, rows*(cols+pad)*dt.Size())}
	for i := range rows * m.ld {
		device.Set(dt, m.host, i, fill())
	}
	return m, uploaded(t, b, m.host)
}

// uploaded is a copy of host in device memory freed when t ends.
func uploaded(t *testing.T, b *cuda.Backend, host []byte) device.Ptr {
	t.Helper()
	p, err := b.Alloc(uint64(len(host)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Free(p, uint64(len(host))) })
	if err := b.Upload(p, host, 0); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGemmMatchesAFloat64Oracle(t *testing.T) {
	b := cudatest.Shared(t)
	rng := newRand(t)
	s := cudatest.Stream(t, b)
	for _, planned := range []bool{true, false} { // small products through cuBLASLt's plans, and through cublasGemmEx
		restore := b.PlanSmallProducts(planned)
		t.Cleanup(restore) // a failure must not leave the shared backend's setting to the next test
		gemmOracle(t, b, rng.Float64, s)
		restore()
	}
}

func gemmOracle(t *testing.T, b *cuda.Backend, uniform func() float64, s device.Stream) {
	type precision struct {
		dt   device.DType
		tf32 bool
		tol  float64
	}
	for _, p := range []precision{
		{device.Float32, false, 1e-5},
		{device.Float32, true, 5e-3},
		{device.Float64, false, 1e-12},
		{device.Float16, false, 1e-2},
		{device.BFloat16, false, 1e-2},
	} {
		for _, shape := range [][3]int{{67, 45, 33}, {256, 192, 128}, {1, 300, 17}, {67, 1, 45}, {40, 30, 0}} { // M or N of 1: the matrix-vector products
			for _, transA := range []bool{false, true} {
				for _, transB := range []bool{false, true} {
					for _, ab := range [][2]float64{{1, 0}, {-0.75, 0.5}} {
						name := fmt.Sprintf("%s tf32=%v %dx%dx%d transA=%v transB=%v alpha=%v beta=%v",
							p.dt, p.tf32, shape[0], shape[1], shape[2], transA, transB, ab[0], ab[1])
						checkGemm(t, b, uniform, name, p.dt, p.tf32, p.tol, shape, transA, transB, ab[0], ab[1], s)
					}
				}
			}
		}
	}
}

func checkGemm(t *testing.T, b *cuda.Backend, uniform func() float64, name string, dt device.DType, tf32 bool, tol float64,
	shape [3]int, transA, transB bool, alpha, beta float64, s device.Stream) {
	m, n, k := shape[0], shape[1], shape[2]
	rnd := func() float64 { return uniform()*2 - 1 }
	ar, ac, br, bc := storedShapes(shape, transA, transB)
	A, pa := randomMatrix(t, b, dt, ar, ac, 3, rnd)
	B, pb := randomMatrix(t, b, dt, br, bc, 1, rnd)
	// C starts random when beta reads it, and poisoned with NaN when it
	// must not be read (beta = 0: BLAS ignores C's old contents). Its
	// padding columns are poisoned in both cases and must stay so.
	C, pc := randomMatrix(t, b, dt, m, n, 2, func() float64 { return math.NaN() })
	if beta != 0 {
		for i := range m {
			for j := range n {
				device.Set(dt, C.host, i*C.ld+j, rnd())
			}
		}
		if err := b.Upload(pc, C.host, 0); err != nil {
			t.Fatal(err)
		}
	}
	opA := func(i, l int) float64 {
		if transA {
			return A.at(l, i)
		}
		return A.at(i, l)
	}
	opB := func(l, j int) float64 {
		if transB {
			return B.at(j, l)
		}
		return B.at(l, j)
	}
	err := b.Gemm(device.Gemm{
		DType: dt, TransA: transA, TransB: transB, M: m, N: n, K: k,
		Alpha: alpha, Beta: beta, A: pa, B: pb, C: pc, LDA: A.ld, LDB: B.ld, LDC: C.ld, TF32: tf32, Stream: s,
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got := make([]byte, len(C.host))
	if err := b.Download(got, pc, s); err != nil {
		t.Fatal(err)
	}
	var diff, ref float64
	for i := range m {
		for j := range n {
			var sum float64
			for l := range k {
				sum += opA(i, l) * opB(l, j)
			}
			want := alpha * sum
			if beta != 0 {
				want += beta * C.at(i, j)
			}
			g := device.Get(dt, got, i*C.ld+j)
			if math.IsNaN(g) || math.IsInf(g, 0) {
				t.Fatalf("%s: C[%d][%d] = %v", name, i, j, g)
			}
			diff += (g - want) * (g - want)
			ref += want * want
		}
		for j := n; j < C.ld; j++ {
			if g := device.Get(dt, got, i*C.ld+j); !math.IsNaN(g) {
				t.Fatalf("%s: padding C[%d][%d] was overwritten with %v", name, i, j, g)
			}
		}
	}
	if ref == 0 {
		if diff != 0 {
			t.Errorf("%s: reference is zero but the result is not", name)
		}
		return
	}
	if rel := math.Sqrt(diff / ref); !(rel <= tol) {
		t.Errorf("%s: relative error %.3g exceeds %.0g", name, rel, tol)
	}
}

// storedShapes are the rows and columns of A and B as stored, for the
// product op(A)·op(B) of shape M×N×K.
func storedShapes(shape [3]int, transA, transB bool) (ar, ac, br, bc int) {
	m, n, k := shape[0], shape[1], shape[2]
	ar, ac, br, bc = m, k, k, n
	if transA {
		ar, ac = k, m
	}
	if transB {
		br, bc = n, k
	}
	return ar, ac, br, bc
}

func TestGemmOnManyStreamsAndAfterDestroyingOne(t *testing.T) {
	b := cudatest.Shared(t)
	rng := newRand(t)
	for range 3 {
		s, err := b.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		checkGemm(t, b, rng.Float64, "float32 on a fresh stream", device.Float32, false, 1e-5, [3]int{33, 65, 17}, false, true, 1, 0, s)
		if err := b.DestroyStream(s); err != nil {
			t.Fatal(err)
		}
	}
	checkGemm(t, b, rng.Float64, "float32 on stream 0", device.Float32, false, 1e-5, [3]int{33, 65, 17}, true, false, 2, 0, 0)
}

func TestGemmArgumentErrorsAreCaughtBeforeCuBLAS(t *testing.T) {
	b := cudatest.Shared(t)
	err := b.Gemm(device.Gemm{DType: device.Int32, M: 2, N: 2, K: 2, A: 256, B: 256, C: 256, LDA: 2, LDB: 2, LDC: 2})
	if err == nil || !strings.Contains(err.Error(), "int32") {
		t.Errorf("int32 gemm: %v", err)
	}
	var ce *cuda.Error
	if errors.As(err, &ce) {
		t.Errorf("argument error came from cuBLAS: %v", err)
	}
}
