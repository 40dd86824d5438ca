package pool

import (
	"fmt"

	"github.com/dustin/go-humanize"
)

// Stats is a snapshot of a pool's accounting. On a Quota the block
// counts and counters are the quota's own, while Reserved, PeakReserved,
// Reclaims, Segments and LargestFreeBlock describe the shared pool; the
// pool's own figures include every quota's blocks.
type Stats struct {
	// Used is the bytes held by live blocks (rounded sizes); Reserved the
	// bytes obtained from the source and not yet returned.
	Used, Reserved, PeakUsed, PeakReserved uint64
	// Requested is the sum of the live blocks' Size (what callers asked for).
	Requested  uint64
	LiveBlocks int
	// Allocations and Frees count successful calls; CacheHits and
	// CacheMisses split the allocations by whether cached memory served
	// them ("none" and "cuda" count every allocation a miss: the first
	// has no cache, the second's is the driver's and opaque).
	// Reclaims counts segments returned to the source from the cache;
	// OOMRetries the ladder's retries after releasing cache or Pressure.
	Allocations, Frees, CacheHits, CacheMisses, Reclaims, OOMRetries uint64
	SoftLimit, HardLimit                                             uint64
	// DeviceFree and DeviceTotal are read from the source when Stats is
	// called (0 when it cannot tell).
	DeviceFree, DeviceTotal uint64
	// Segments is the number of segments obtained from the source and
	// LargestFreeBlock the largest cached piece of them.
	Segments         int
	LargestFreeBlock uint64
}

// accounting is one layer's share of Stats: the pool's own figures cover
// every block, its quotas' included.
type accounting struct {
	used, requested, peakUsed, peakReserved uint64
	live                                    int
	allocations, frees, hits, misses        uint64
	oomRetries                              uint64
}

func (a *accounting) alloc(b *Block, hit bool) {
	a.used += b.rounded
	a.requested += b.Size
	a.peakUsed = max(a.peakUsed, a.used)
	a.live++
	a.allocations++
	if hit {
		a.hits++
	} else {
		a.misses++
	}
}

// zero records a block of size 0, which holds no memory but is live.
func (a *accounting) zero() {
	a.live++
	a.allocations++
}

func (a *accounting) free(b *Block) {
	a.used -= b.rounded
	a.requested -= b.Size
	a.live--
	a.frees++
}

func (a *accounting) resetPeak(reserved uint64) {
	a.peakUsed = a.used
	a.peakReserved = reserved
}

// Stats returns a snapshot of the pool's accounting.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.statsLocked(&p.acct, p.soft, p.c.hard)
}

// statsLocked is Stats for a layer whose figures are a and limits soft and
// hard, over the pool's shared ones.
func (p *Pool) statsLocked(a *accounting, soft, hard uint64) Stats {
	// The strategy first: strategy "cuda" reads the driver's reserved bytes
	// there, which the figures below include.
	var st Stats
	if !p.closed {
		p.a.describe(&st)
		if free, total, err := p.c.src.MemInfo(); err == nil {
			st.DeviceFree, st.DeviceTotal = free, total
		}
	}
	st.Used, st.Reserved, st.PeakUsed, st.PeakReserved = a.used, p.c.reserved, a.peakUsed, a.peakReserved
	st.Requested, st.LiveBlocks = a.requested, a.live
	st.Allocations, st.Frees, st.CacheHits, st.CacheMisses = a.allocations, a.frees, a.hits, a.misses
	st.Reclaims, st.OOMRetries = p.c.reclaims, a.oomRetries
	st.SoftLimit, st.HardLimit = soft, hard
	return st
}

// ResetPeak starts PeakUsed and PeakReserved again from the current figures.
func (p *Pool) ResetPeak() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acct.resetPeak(p.c.reserved)
}

// formatBytes writes a size the way every glua message does: IEC units
// with two decimals ("1.50 GiB", "400.00 MiB"), whole bytes below 1 KiB.
func formatBytes(n uint64) string {
	if n < humanize.KiByte {
		return fmt.Sprintf("%d B", n)
	}
	units := []struct {
		size uint64
		name string
	}{
		{humanize.EiByte, "EiB"}, {humanize.PiByte, "PiB"}, {humanize.TiByte, "TiB"},
		{humanize.GiByte, "GiB"}, {humanize.MiByte, "MiB"}, {humanize.KiByte, "KiB"},
	}
	for _, u := range units {
		if n >= u.size {
			return humanize.FormatFloat("#.##", float64(n)/float64(u.size)) + " " + u.name
		}
	}
	return fmt.Sprintf("%d B", n)
}

// plural is "1 array" or "3 arrays".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
