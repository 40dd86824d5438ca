package pool

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gluaproject/glua/device"
)

// fragPattern is the mixed-size workload of the fragmentation measurement,
// in KiB: 1, 2, 1.5, 4, 0.5, 2, 1 MiB, repeated.
var fragPattern = []uint64{1024, 2048, 1536, 4096, 512, 2048, 1024}

// fragPatternSmall is the same shape at a sixteenth of the size: every
// block is small, so they share 2 MiB segments, and a live one pins its
// segment's freed neighbours.
var fragPatternSmall = []uint64{64, 128, 96, 256, 32, 128, 64}

type fragResult struct {
	strategy       string
	limit, live    uint64
	largest        uint64
	ratio          float64
	liveBlocks     int
	sourceLargest  uint64 // the largest hole the device itself has left
	reservedBefore uint64 // reserved when the large request is made
	noRelease      uint64 // the largest block without the ladder's release rung
}

// sharedMid names, in the measurement, the caching strategy with PyTorch's
// shared 20 MiB segments for 1-10 MiB blocks.
const sharedMid = "caching-shared20"

// measureFragmentation fills fill×limit with the pattern, frees every other
// block, and finds the largest block that can still be allocated. limit is
// the hard limit when hard is set, else the device's capacity.
func measureFragmentation(strategy string, pattern []uint64, capacity, hard uint64, fill float64) (fragResult, error) {
	src := newFakeSource(capacity)
	name := strategy
	if strategy == sharedMid {
		strategy = StrategyCaching
	}
	p, err := New(src, Config{Strategy: strategy, HardLimit: hard})
	if err != nil {
		return fragResult{}, err
	}
	if name == sharedMid {
		shareMidSegments(p)
	}
	defer p.Close()
	limit := capacity
	if hard > 0 {
		limit = hard
	}
	var blocks []*Block
	var total uint64
	for i := 0; float64(total) < fill*float64(limit); i++ {
		n := pattern[i%len(pattern)] * kib
		b, err := p.Alloc(n, 0)
		if err != nil {
			return fragResult{}, fmt.Errorf("filling: %w", err)
		}
		blocks = append(blocks, b)
		total += n
	}
	for i := 1; i < len(blocks); i += 2 {
		if err := p.Free(blocks[i]); err != nil {
			return fragResult{}, err
		}
	}
	st := p.Stats()
	r := fragResult{strategy: name, limit: limit, live: st.Requested, liveBlocks: st.LiveBlocks, reservedBefore: st.Reserved}
	// Without the ladder's release rung, the largest block would be the
	// largest cached one or the largest the device can still place within
	// the hard limit.
	r.noRelease = min(src.largestFree(), limit-st.Reserved)
	r.noRelease = max(r.noRelease-r.noRelease%(64*kib), st.LargestFreeBlock)
	// Binary search at 64 KiB resolution for the largest allocation.
	const step = 64 * kib
	lo, hi := uint64(0), (limit-r.live)/step+1 // lo fits, hi does not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		b, err := p.Alloc(mid*step, 0)
		if err != nil {
			if !errors.Is(err, device.ErrOutOfMemory) {
				return r, err
			}
			hi = mid
			continue
		}
		lo = mid
		if err := p.Free(b); err != nil {
			return r, err
		}
	}
	r.largest = lo * step
	r.ratio = float64(r.largest) / float64(limit-r.live)
	if _, err := p.Reclaim(0); err != nil {
		return r, err
	}
	r.sourceLargest = src.largestFree()
	return r, nil
}

// TestFragmentationLeavesRoomForALargeBlock measures, after the mixed-size
// pattern with every other block freed, the largest block that can still be
// allocated as a fraction of (limit - live bytes), for the caching strategy
// and for "none". Two limits: the device's own capacity (the fake places
// first-fit, so the holes between live blocks fragment it for every
// strategy) and a hard limit on a larger device (only accounting binds).
// Run with -v for the table.
func TestFragmentationLeavesRoomForALargeBlock(t *testing.T) {
	for _, scenario := range []struct {
		name           string
		capacity, hard uint64
	}{
		{"limit=device", gib, 0},
		{"limit=hard", 4 * gib, gib},
	} {
		for _, fill := range []float64{0.1, 0.25, 0.5, 0.75} {
			results := map[string]fragResult{}
			for _, strategy := range []string{StrategyNone, StrategyCaching, sharedMid} {
				r, err := measureFragmentation(strategy, fragPattern, scenario.capacity, scenario.hard, fill)
				if err != nil {
					t.Fatalf("%s, fill %.2f, %s: %v", scenario.name, fill, strategy, err)
				}
				results[strategy] = r
				t.Logf("%-12s fill %.2f %-16s live %4d MiB in %3d blocks, reserved %4d MiB; largest %4d MiB = %.3f (%.3f without the release rung)",
					scenario.name, fill, strategy, r.live/mib, r.liveBlocks, r.reservedBefore/mib, r.largest/mib, r.ratio,
					float64(r.noRelease)/float64(r.limit-r.live))
			}
			none, caching := results[StrategyNone], results[StrategyCaching]
			// The pool must not fragment worse than going straight to the
			// device, by more than its 2 MiB small segments can cost.
			if caching.ratio < none.ratio-0.03 {
				t.Errorf("%s, fill %.2f: caching leaves %.3f, none %.3f", scenario.name, fill, caching.ratio, none.ratio)
			}
			// Where only the hard limit binds, the space between live
			// blocks is not lost: the goal is 0.95.
			if scenario.hard > 0 && caching.ratio < 0.95 {
				t.Errorf("%s, fill %.2f: caching leaves %.3f of the free space allocatable; goal 0.95", scenario.name, fill, caching.ratio)
			}
		}
	}
}

// TestFragmentationOfSmallBlocks is the same measurement with blocks of
// 32-256 KiB. These share 2 MiB segments, and with every other one freed
// nearly every segment keeps a live block, so the caching strategy holds
// about twice the live bytes; the table shows what that costs.
func TestFragmentationOfSmallBlocks(t *testing.T) {
	for _, fill := range []float64{0.1, 0.25, 0.5} {
		for _, strategy := range []string{StrategyNone, StrategyCaching} {
			r, err := measureFragmentation(strategy, fragPatternSmall, 4*gib, gib, fill)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("limit=hard   fill %.2f %-8s live %4d MiB in %5d blocks, reserved %4d MiB; largest %4d MiB = %.3f",
				fill, strategy, r.live/mib, r.liveBlocks, r.reservedBefore/mib, r.largest/mib, r.ratio)
			// A live small block can pin at most its 2 MiB segment: the
			// pool holds at most twice what is live (every other block
			// freed), and the largest block is what the rest leaves.
			if want := float64(r.limit-2*r.live-smallSegment) / float64(r.limit-r.live); r.ratio < want {
				t.Errorf("fill %.2f %s: %.3f, want at least %.3f", fill, strategy, r.ratio, want)
			}
		}
	}
}
