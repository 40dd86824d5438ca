package cpu

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/gluaproject/glua/device"
)

// BenchmarkGemm1024Float32 and BenchmarkGonumSgemm1024 do the same product,
// through the backend and straight through gonum: the gap is the backend's
// overhead (lookups and checks), which must stay small (no hidden copies).
func BenchmarkGemm1024Float32(b *testing.B) {
	const n = 1024
	be, err := New(Config{Capacity: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	var ps [3]device.Ptr
	for i := range ps {
		ps[i], _ = be.Alloc(4 * n * n)
		f := float32s(be.Bytes(ps[i], 4*n*n))
		for j := range f {
			f[j] = rng.Float32()
		}
	}
	g := device.Gemm{DType: device.Float32, M: n, N: n, K: n, Alpha: 1, A: ps[0], B: ps[1], C: ps[2], LDA: n, LDB: n, LDC: n}
	b.SetBytes(2 * n * n * n) // flops, so that MB/s reads as MFLOP/s
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := be.Gemm(g); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGonumSgemm1024(b *testing.B) {
	const n = 1024
	rng := rand.New(rand.NewPCG(1, 1))
	var m [3][]float32
	for i := range m {
		m[i] = make([]float32, n*n)
		for j := range m[i] {
			m[i][j] = rng.Float32()
		}
	}
	b.SetBytes(2 * n * n * n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		gonum.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, m[0], n, m[1], n, 0, m[2], n)
	}
}
