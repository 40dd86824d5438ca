package kernels_test

import (
	"math"
	"testing"

	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
)

// BenchmarkGPUSumKernels is kernels.sum's two kernels queued back to
// back on the device clock, with no number read between calls: the
// kernels' own time, beside torch.sum's device time (reduce.py). A Lua
// caller's kernels.sum also waits for its number (reduce.lua).
func BenchmarkGPUSumKernels(b *testing.B) {
	be := cudatest.Shared(b)
	g := kernels.NewGPU(be)
	const n = 1 << 28
	for _, dt := range []device.DType{device.Float32, device.Float64, device.BFloat16} {
		b.Run(dt.String(), func(b *testing.B) {
			nbytes := uint64(n * dt.Size())
			x, err := be.Alloc(nbytes)
			if err != nil {
				b.Fatal(err)
			}
			defer be.Free(x, nbytes)
			scratchBytes := kernels.ReduceScratchBytes(n)
			scratch, err := be.Alloc(scratchBytes)
			if err != nil {
				b.Fatal(err)
			}
			defer be.Free(scratch, scratchBytes)
			if err := g.Rand(dt, x, 7, 0, n, 0); err != nil {
				b.Fatal(err)
			}
			// Uniform [0, 1): the sum is near n/2, never 0.
			if sum, err := g.Sum(dt, x, n, scratch, 0); err != nil || math.Abs(sum/n-0.5) > 0.01 {
				b.Fatalf("sum of %d uniform %s = %v (%v)", n, dt, sum, err)
			}
			start, err := be.NewTimingEvent()
			if err != nil {
				b.Fatal(err)
			}
			defer be.DestroyEvent(start)
			end, err := be.NewTimingEvent()
			if err != nil {
				b.Fatal(err)
			}
			defer be.DestroyEvent(end)
			const reps = 20
			var total float64
			b.ResetTimer()
			for range b.N {
				if err := be.Record(start, 0); err != nil {
					b.Fatal(err)
				}
				for range reps {
					if err := g.QueueSum(dt, x, n, scratch, 0); err != nil {
						b.Fatal(err)
					}
				}
				if err := be.Record(end, 0); err != nil {
					b.Fatal(err)
				}
				if err := be.EventSynchronize(end); err != nil {
					b.Fatal(err)
				}
				sec, err := be.Elapsed(start, end)
				if err != nil {
					b.Fatal(err)
				}
				total += sec
			}
			per := total / float64(b.N*reps)
			b.ReportMetric(per*1e3, "device-ms/sum")
			b.ReportMetric(float64(nbytes)/per/1e9, "GB/s")
			b.Logf("%s: %.4f ms per sum on the device clock", dt, per*1e3)
		})
	}
}
