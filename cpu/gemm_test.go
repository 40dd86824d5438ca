package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

// hostMatrix is a matrix placed in backend memory with a row stride larger
// than its width, so that tests see whether Gemm honours LD and leaves the
// padding alone.
type hostMatrix struct {
	p          device.Ptr
	rows, cols int
	ld         int
	dt         device.DType
	nbytes     uint64
}

func placeMatrix(t *testing.T, b *Backend, rng *rand.Rand, dt device.DType, rows, cols, pad int) hostMatrix {
	t.Helper()
	ld := cols + pad
	n := max(1, rows*ld) * dt.Size()
	p, err := b.Alloc(uint64(n))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, n)
	for i := 0; i < n/dt.Size(); i++ {
		device.Set(dt, buf, i, rng.Float64()*4-2)
	}
	if err := b.Upload(p, buf, 0); err != nil {
		t.Fatal(err)
	}
	return hostMatrix{p: p, rows: rows, cols: cols, ld: ld, dt: dt, nbytes: uint64(n)}
}

func (m hostMatrix) at(b *Backend, i, j int) float64 {
	return device.Get(m.dt, b.Bytes(m.p, m.nbytes), i*m.ld+j)
}

func (m hostMatrix) snapshot(b *Backend) []byte {
	return append([]byte(nil), b.Bytes(m.p, m.nbytes)...)
}

// gemmTolerance is the allowed error relative to alpha·Σ|a||b| + |beta·c|:
// accumulation error for the wide types, one rounding of the result for the
// 2-byte ones.
var gemmTolerance = map[device.DType]float64{
	device.Float64:  1e-13,
	device.Float32:  1e-5,
	device.Float16:  1.5e-3,
	device.BFloat16: 8e-3,
}

func TestGemmMatchesAFloat64LoopForEveryDTypeAndTranspose(t *testing.T) {
	b, err := New(Config{Capacity: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	sizes := []struct{ m, n, k int }{{1, 1, 1}, {5, 7, 3}, {33, 17, 70}, {130, 131, 20}}
	scalars := []struct{ alpha, beta float64 }{{1, 0}, {1.5, -0.5}}
	for _, dt := range []device.DType{device.Float32, device.Float64, device.Float16, device.BFloat16} {
		for _, sz := range sizes {
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				for _, sc := range scalars {
					name := fmt.Sprintf("%s/%dx%dx%d/tA=%t,tB=%t/alpha=%g,beta=%g", dt, sz.m, sz.n, sz.k, tr[0], tr[1], sc.alpha, sc.beta)
					t.Run(name, func(t *testing.T) {
						checkGemm(t, b, rng, dt, sz.m, sz.n, sz.k, tr[0], tr[1], sc.alpha, sc.beta)
					})
				}
			}
		}
	}
}

func checkGemm(t *testing.T, b *Backend, rng *rand.Rand, dt device.DType, m, n, k int, tA, tB bool, alpha, beta float64) {
	ar, ac := m, k
	if tA {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB {
		br, bc = n, k
	}
	A := placeMatrix(t, b, rng, dt, ar, ac, 3)
	B := placeMatrix(t, b, rng, dt, br, bc, 1)
	C := placeMatrix(t, b, rng, dt, m, n, 2)
	defer b.Free(A.p, A.nbytes)
	defer b.Free(B.p, B.nbytes)
	defer b.Free(C.p, C.nbytes)
	before := C.snapshot(b)

	// op(A) and op(B) as float64s, read from the backend once each: the
	// loop below reads every element n or m times.
	opA, opB := make([]float64, m*k), make([]float64, k*n)
	for l := 0; l < k; l++ {
		for i := 0; i < m; i++ {
			if tA {
				opA[i*k+l] = A.at(b, l, i)
			} else {
				opA[i*k+l] = A.at(b, i, l)
			}
		}
		for j := 0; j < n; j++ {
			if tB {
				opB[l*n+j] = B.at(b, j, l)
			} else {
				opB[l*n+j] = B.at(b, l, j)
			}
		}
	}
	want := make([]float64, m*n)
	scale := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var sum, abs float64
			for l := 0; l < k; l++ {
				sum += opA[i*k+l] * opB[l*n+j]
				abs += math.Abs(opA[i*k+l] * opB[l*n+j])
			}
			c := C.at(b, i, j)
			want[i*n+j] = alpha*sum + beta*c
			scale[i*n+j] = math.Abs(alpha)*abs + math.Abs(beta*c)
		}
	}

	err := b.Gemm(device.Gemm{
		DType: dt, TransA: tA, TransB: tB, M: m, N: n, K: k, Alpha: alpha, Beta: beta,
		A: A.p, B: B.p, C: C.p, LDA: A.ld, LDB: B.ld, LDC: C.ld,
	})
	if err != nil {
		t.Fatal(err)
	}
	tol := gemmTolerance[dt]
	after := C.snapshot(b)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			got := C.at(b, i, j)
			if d := math.Abs(got - want[i*n+j]); !(d <= tol*scale[i*n+j]+1e-300) {
				t.Fatalf("C[%d,%d] = %g, want %g (error %g, allowed %g)", i, j, got, want[i*n+j], d, tol*scale[i*n+j])
			}
		}
		for j := n; j < C.ld && (i+1)*C.ld <= len(after)/dt.Size(); j++ {
			idx := (i*C.ld + j) * dt.Size()
			if string(after[idx:idx+dt.Size()]) != string(before[idx:idx+dt.Size()]) {
				t.Fatalf("Gemm wrote into C's padding at row %d, column %d", i, j)
			}
		}
	}
}

func TestGemmWithBetaZeroIgnoresNaNsInC(t *testing.T) {
	b := newTestBackend(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for _, dt := range []device.DType{device.Float32, device.Float64, device.Float16, device.BFloat16} {
		A := placeMatrix(t, b, rng, dt, 4, 4, 0)
		B := placeMatrix(t, b, rng, dt, 4, 4, 0)
		C := placeMatrix(t, b, rng, dt, 4, 4, 0)
		cb := b.Bytes(C.p, C.nbytes)
		for i := 0; i < 16; i++ {
			device.Set(dt, cb, i, math.NaN())
		}
		err := b.Gemm(device.Gemm{DType: dt, M: 4, N: 4, K: 4, Alpha: 1, A: A.p, B: B.p, C: C.p, LDA: 4, LDB: 4, LDC: 4})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 16; i++ {
			if v := device.Get(dt, cb, i); math.IsNaN(v) {
				t.Fatalf("%s: C[%d] is NaN after beta=0", dt, i)
			}
		}
	}
}

func TestGemmWithKZeroScalesCByBeta(t *testing.T) {
	b := newTestBackend(t)
	rng := rand.New(rand.NewPCG(15, 16))
	for _, dt := range []device.DType{device.Float32, device.Float64, device.Float16, device.BFloat16} {
		for _, beta := range []float64{0.25, 0} {
			C := placeMatrix(t, b, rng, dt, 3, 5, 2)
			want := make([]float64, 15)
			for i := range want {
				want[i] = beta * C.at(b, i/5, i%5)
			}
			// A and B span no memory when K is 0, so their addresses are
			// not read.
			err := b.Gemm(device.Gemm{DType: dt, M: 3, N: 5, K: 0, Alpha: 1, Beta: beta, C: C.p, LDA: 1, LDB: 5, LDC: 7})
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range want {
				if got := C.at(b, i/5, i%5); got != w {
					t.Fatalf("%s, beta=%g: C[%d] = %g, want %g", dt, beta, i, got, w)
				}
			}
		}
	}
}

func TestGemmRejectsBadArgumentsBeforeTouchingMemory(t *testing.T) {
	b := newTestBackend(t)
	p, _ := b.Alloc(4 * 16)
	small, _ := b.Alloc(4 * 15)
	dead, _ := b.NewStream()
	b.DestroyStream(dead)
	ok := device.Gemm{DType: device.Float32, M: 4, N: 4, K: 4, Alpha: 1, A: p, B: p, C: p, LDA: 4, LDB: 4, LDC: 4}
	for _, tc := range []struct {
		name string
		edit func(g *device.Gemm)
		want string
	}{
		{"int32", func(g *device.Gemm) { g.DType = device.Int32 }, "matmul: int32 is not supported (float32, float64, float16, bfloat16)"},
		{"uint8", func(g *device.Gemm) { g.DType = device.Uint8 }, "matmul: uint8 is not supported"},
		{"invalid dtype", func(g *device.Gemm) { g.DType = device.Invalid }, "matmul: invalid dtype"},
		{"negative size", func(g *device.Gemm) { g.K = -1 }, "must not be negative"},
		{"LDA too small", func(g *device.Gemm) { g.LDA = 3 }, "LDA=3 is smaller than the 4 columns of A"},
		{"LDB too small for transposed B", func(g *device.Gemm) { g.TransB, g.N, g.LDB = true, 2, 3 }, "LDB=3 is smaller than the 4 columns of B"},
		{"LDC zero", func(g *device.Gemm) { g.M, g.N, g.LDC = 0, 0, 0 }, "LDC=0"},
		{"A past its allocation", func(g *device.Gemm) { g.A = small }, "A (4x4 with LDA=4)"},
		{"C outside any allocation", func(g *device.Gemm) { g.C = 64 }, "C (4x4 with LDC=4) at 0x40 is not inside"},
		{"misaligned B", func(g *device.Gemm) { g.B = p + 2 }, "B at"},
		{"huge stride", func(g *device.Gemm) { g.LDA = math.MaxInt / 2 }, "larger than any allocation"},
		{"destroyed stream", func(g *device.Gemm) { g.Stream = dead }, "not a live stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := ok
			tc.edit(&g)
			err := b.Gemm(g)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Gemm = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if err := b.Gemm(ok); err != nil {
		t.Fatalf("the unedited product fails: %v", err)
	}
}
