package runtime_test

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/runtime"
)

// BenchmarkMatmul1024Float32 and BenchmarkGonumSgemm1024 do the same
// product; the runtime's overhead over calling gonum directly is their
// difference (the target is under 10%).
func BenchmarkMatmul1024Float32(b *testing.B) {
	rt := newCPU(b, runtime.Options{CPUMemory: "1GiB"})
	const n = 1024
	A, _ := rt.ToDevice(randomHost(b, []int{n, n}, runtime.Float32))
	B, _ := rt.ToDevice(randomHost(b, []int{n, n}, runtime.Float32))
	C, _ := rt.Zeros([]int{n, n}, runtime.Float32)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := rt.Matmul(C, A, B, runtime.MatmulOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkGonumSgemm1024(b *testing.B) {
	const n = 1024
	// The same kind of inputs as BenchmarkMatmul1024Float32: uniform random
	// in [-1, 1), never patterned data, whose speed can differ.
	a := randomFloat32s(n * n)
	x := randomFloat32s(n * n)
	c := make([]float32, n*n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		gonum.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, x, n, 0, c, n)
	}
	b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func randomFloat32s(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = rand.Float32()*2 - 1
	}
	return v
}

// BenchmarkPoolAllocFree1MiB is a cached 1 MiB allocation and its free
// through the runtime's pool, from Go, on the cuda backend when there is a
// GPU (the cpu backend otherwise): the pool's fast path with the real
// source behind it. The target is 200 ns.
func BenchmarkPoolAllocFree1MiB(b *testing.B) {
	c := config.Default()
	rt, err := runtime.New(runtime.Options{Config: &c})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	p := rt.Pool()
	b.Run(rt.BackendName(), func(b *testing.B) {
		warm, err := p.Alloc(1<<20, 0)
		if err != nil {
			b.Fatal(err)
		}
		p.Free(warm)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			blk, err := p.Alloc(1<<20, 0)
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Free(blk); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTinyKernelFromGo is an in-place kernel on a 16-element array
// through the runtime, from Go, on the cuda backend when there is a GPU:
// BenchmarkTinyKernelFromLua without the Lua call, and the runtime's
// share above the cuda package's BenchmarkLaunch.
func BenchmarkTinyKernelFromGo(b *testing.B) {
	c := config.Default()
	rt, err := runtime.New(runtime.Options{Config: &c})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	x, err := rt.Zeros([]int{16}, runtime.Float32)
	if err != nil {
		b.Fatal(err)
	}
	b.Run(rt.BackendName(), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := rt.Scale(x, 1); err != nil {
				b.Fatal(err)
			}
		}
		if err := rt.Synchronize(); err != nil {
			b.Fatal(err)
		}
	})
}
