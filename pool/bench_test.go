package pool

import (
	"testing"

	"github.com/gluaproject/glua/device"
)

// BenchmarkAllocFree1MiB is a cached allocation and its free: the pool's
// fast path, with no call to the source.
func BenchmarkAllocFree1MiB(b *testing.B) {
	benchAllocFree(b, newFakeSource(gib), StrategyCaching, mib)
}

// BenchmarkAllocFree1MiBEvents is the same over a source with events (the
// cuda backend's shape): each free records the stream's fence event.
func BenchmarkAllocFree1MiBEvents(b *testing.B) {
	benchAllocFree(b, newEventSource(gib), StrategyCaching, mib)
}

// BenchmarkAllocFree1MiBNone is strategy "none": every pair is two source
// calls (here the fake's; on a GPU cuMemAlloc alone took ~133 µs).
func BenchmarkAllocFree1MiBNone(b *testing.B) {
	benchAllocFree(b, newFakeSource(gib), StrategyNone, mib)
}

// BenchmarkAllocFree4KiB is the small-block path (a split of a 2 MiB
// segment and a merge back on free).
func BenchmarkAllocFree4KiB(b *testing.B) {
	benchAllocFree(b, newFakeSource(gib), StrategyCaching, 4*kib)
}

func benchAllocFree(b *testing.B, src Source, strategy string, n uint64) {
	p, err := New(src, Config{Strategy: strategy})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	// Some other live blocks, so the trees are not trivially small.
	for i := 0; i < 64; i++ {
		if _, err := p.Alloc(uint64(i+1)*100*kib, device.Stream(i%2)); err != nil {
			b.Fatal(err)
		}
	}
	warm, _ := p.Alloc(n, 0)
	_ = p.Free(warm)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		blk, err := p.Alloc(n, 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Free(blk); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAllocFreeParallel is cached pairs from every CPU at once, all
// contending for the pool's one lock.
func BenchmarkAllocFreeParallel(b *testing.B) {
	p, err := New(newFakeSource(gib), Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			blk, err := p.Alloc(mib, 0)
			if err != nil {
				b.Error(err)
				return
			}
			_ = p.Free(blk)
		}
	})
}

// BenchmarkFragmentation runs the fragmentation measurement (fill half the
// limit with 0.5-4 MiB blocks, free every other one, find the largest
// block) and reports the fraction of (limit - live) still allocatable.
func BenchmarkFragmentation(b *testing.B) {
	for _, scenario := range []struct {
		name           string
		capacity, hard uint64
	}{
		{"limit=device", gib, 0},
		{"limit=hard", 4 * gib, gib},
	} {
		for _, strategy := range []string{StrategyNone, StrategyCaching, sharedMid} {
			b.Run(scenario.name+"/"+strategy, func(b *testing.B) {
				var r fragResult
				for i := 0; i < b.N; i++ {
					var err error
					if r, err = measureFragmentation(strategy, fragPattern, scenario.capacity, scenario.hard, 0.5); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(r.ratio, "ratio")
			})
		}
	}
}
