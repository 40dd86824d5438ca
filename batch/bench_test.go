package batch_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/gluaproject/glua/batch"
	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/runtime"
)

// BenchmarkOutOfCoreMatmul is batch.Matmul of n×n float32 host matrices
// under a budget of a quarter of the operands' size: n is GLUA_BENCH_N
// (512), the backend GLUA_BENCH_BACKEND (cpu; cuda on a GPU).
func BenchmarkOutOfCoreMatmul(b *testing.B) {
	backend := os.Getenv("GLUA_BENCH_BACKEND")
	if backend == "" {
		backend = "cpu"
	}
	n := 512
	if s := os.Getenv("GLUA_BENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	c := config.Default()
	rt, err := runtime.New(runtime.Options{Config: &c, Backend: backend, CPUMemory: "8GiB"})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	host := func(seed uint64) *runtime.HostArray {
		d, err := rt.Rand([]int{n, n}, runtime.Float32, &seed)
		if err != nil {
			b.Fatal(err)
		}
		h, err := d.CopyToHost(nil)
		if err != nil {
			b.Fatal(err)
		}
		d.Free()
		return h
	}
	A, B := host(1), host(2)
	out, _ := rt.NewHostArray([]int{n, n}, runtime.Float32, false)
	o := batch.MatmulOptions{Budget: uint64(2*4*n*n) / 4, Out: out}
	b.SetBytes(int64(2 * n * n * n)) // flops, so that MB/s reads as MFLOP/s
	b.ResetTimer()
	for b.Loop() {
		if _, err := batch.Matmul(rt, A, B, o); err != nil {
			b.Fatal(err)
		}
	}
}
