package batch_test

import (
	"errors"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/gluaproject/glua/batch"
	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// BenchmarkOutOfCoreMatmul is batch.Matmul of n×n float32 host matrices
// under a budget of a quarter of the operands' size, or
// GLUA_BENCH_BUDGET_MIB (see outOfCoreSetup).
func BenchmarkOutOfCoreMatmul(b *testing.B) {
	rt, A, B, o := outOfCoreSetup(b)
	n := A.Shape()[0]
	b.SetBytes(int64(2 * n * n * n)) // flops, so that MB/s reads as MFLOP/s
	b.ResetTimer()
	for b.Loop() {
		if _, err := batch.Matmul(rt, A, B, o); err != nil {
			b.Fatal(err)
		}
	}
}

// outOfCoreSetup makes the runtime and the operands of the out-of-core
// benchmarks: n×n downloads of GLUA_BENCH_DTYPE (float32), n GLUA_BENCH_N
// (512), on the backend
// GLUA_BENCH_BACKEND (cpu; cuda on a GPU), with a budget of a quarter of
// their size, and C as GLUA_BENCH_OUT says: "pinned" (a pinned out), "new"
// (a new array each call) or "host" (an existing array, the default).
func outOfCoreSetup(b *testing.B) (*runtime.Runtime, *runtime.HostArray, *runtime.HostArray, batch.MatmulOptions) {
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
	b.Cleanup(func() { rt.Close() })
	dt := runtime.Float32
	if s := os.Getenv("GLUA_BENCH_DTYPE"); s != "" {
		if dt, err = device.ParseDType(s); err != nil || !dt.IsFloat() {
			b.Fatalf("GLUA_BENCH_DTYPE is %q: want a float dtype", s)
		}
	}
	host := func(seed uint64) *runtime.HostArray {
		d, err := rt.Rand([]int{n, n}, dt, &seed)
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
	o := batch.MatmulOptions{Budget: uint64(2*dt.Size()*n*n) / 4}
	if s := os.Getenv("GLUA_BENCH_BUDGET_MIB"); s != "" {
		mib, err := strconv.Atoi(s)
		if err != nil || mib <= 0 {
			b.Fatalf("GLUA_BENCH_BUDGET_MIB is %q: want a number of MiB", s)
		}
		o.Budget = uint64(mib) << 20
	}
	switch out := os.Getenv("GLUA_BENCH_OUT"); out {
	case "", "host", "pinned":
		if o.Out, err = rt.NewHostArray([]int{n, n}, dt, out == "pinned"); err != nil {
			b.Fatal(err)
		}
	case "new":
	default:
		b.Fatalf("GLUA_BENCH_OUT is %q: want pinned, new or host", out)
	}
	return rt, A, B, o
}

// inCoreTime is the device time in seconds of the n×n product of dt
// with everything on the device, the fastest of three after one.
func inCoreTime(b *testing.B, rt *runtime.Runtime, n int, dt runtime.DType) float64 {
	seed := uint64(3)
	A, errA := rt.Rand([]int{n, n}, dt, &seed)
	B, errB := rt.Rand([]int{n, n}, dt, &seed)
	C, errC := rt.Zeros([]int{n, n}, dt)
	start, errS := rt.NewEvent()
	end, errE := rt.NewEvent()
	if err := errors.Join(errA, errB, errC, errS, errE); err != nil {
		b.Fatal(err)
	}
	defer func() { A.Free(); B.Free(); C.Free() }()
	best := math.Inf(1)
	for i := range 4 {
		err := errors.Join(start.Record(nil), rt.Matmul(C, A, B, runtime.MatmulOptions{}), end.Record(nil))
		s, errT := end.Since(start)
		if err := errors.Join(err, errT); err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			best = min(best, s)
		}
	}
	return best
}
