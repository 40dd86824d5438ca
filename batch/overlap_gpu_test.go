package batch_test

import (
	"testing"
	"time"

	"github.com/gluaproject/glua/batch"
	_ "github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/internal/gputest"
	"github.com/gluaproject/glua/runtime"
)

// newCUDA is a runtime on the GPU, closed when the test ends; the test is
// skipped without one (and fails with GLUA_REQUIRE_CUDA=1).
func newCUDA(t *testing.T) *runtime.Runtime { return gputest.Runtime(t) }

// On the GPU the copies of the next batches run while the body computes:
// a loop whose copies and compute take about as long as each other takes
// well under their sum (serialised, it would take the sum).
func TestCopiesOverlapComputeOnTheGPU(t *testing.T) {
	rt := newCUDA(t)
	const n, count = 2048, 24 // 16 MiB batches of 2048x2048 float32
	var batches [][]*runtime.HostArray
	for range count {
		batches = append(batches, []*runtime.HostArray{randomHost(t, rt, []int{n, n}, runtime.Float32, true)})
	}
	W, _ := rt.Rand([]int{n, n}, runtime.Float32, nil)
	C, _ := rt.Zeros([]int{n, n}, runtime.Float32)
	tf32 := runtime.MatmulOptions{Precision: "tf32"}
	loop := func(reps int) time.Duration {
		it, err := batch.NewIter(rt, batch.List(batches), batch.Options{Prefetch: 2, Unchanged: true})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		drain(t, it, func(_ int, arrays []*runtime.Array) {
			for range reps {
				if err := rt.Matmul(C, arrays[0], W, tf32); err != nil {
					t.Fatal(err)
				}
			}
		})
		if err := rt.Synchronize(); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	compute := func(reps int) time.Duration {
		x, _ := rt.Rand([]int{n, n}, runtime.Float32, nil)
		defer x.Free()
		rt.Synchronize()
		start := time.Now()
		for range count * reps {
			rt.Matmul(C, x, W, tf32)
		}
		rt.Synchronize()
		return time.Since(start)
	}
	loop(0) // warm: staging, kernels, cuBLAS
	compute(1)
	transfer := loop(0)
	reps := max(1, int(transfer/compute(1)))
	work := compute(reps)
	both := loop(reps)
	t.Logf("transfer alone %v, compute alone %v (%d products a batch), both %v: %.2f of the larger",
		transfer, work, reps, both, float64(both)/float64(max(transfer, work)))
	if both > (transfer+work)*85/100 {
		t.Fatalf("copies and compute took %v together against %v and %v apart: they did not overlap", both, transfer, work)
	}
}
