package pool

import (
	"fmt"

	"github.com/dustin/go-humanize"
)

// Stats is a snapshot of a pool's accounting. On a quota view the block
// counts and counters are the view's own, while Reserved, PeakReserved,
// Reclaims, Segments and LargestFreeBlock describe the shared pool; the
// root pool's figures include every view's blocks.
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

// accounting is one pool's (or view's) share of Stats.
type accounting struct {
	used, requested, peakUsed, peakReserved uint64
	live                                    int
	allocations, frees, hits, misses        uint64
	oomRetries                              uint64
}

// each calls f for p and, when p is a quota view, for the root, whose
// figures cover every view.
func (p *Pool) each(f func(a *accounting)) {
	f(&p.acct)
	if r := p.c.root; r != p {
		f(&r.acct)
	}
}

func (p *Pool) countAlloc(b *Block, hit bool) {
	p.each(func(a *accounting) {
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
	})
	if p.live != nil {
		p.live[b] = struct{}{}
	}
}

// countZero records a block of size 0, which holds no memory but is live.
func (p *Pool) countZero(b *Block) {
	p.each(func(a *accounting) {
		a.live++
		a.allocations++
	})
	if p.live != nil {
		p.live[b] = struct{}{}
	}
}

func (p *Pool) countFree(b *Block) {
	p.each(func(a *accounting) {
		a.used -= b.rounded
		a.requested -= b.Size
		a.live--
		a.frees++
	})
	if p.live != nil {
		delete(p.live, b)
	}
}

func (p *Pool) countRetry() {
	p.each(func(a *accounting) { a.oomRetries++ })
}

// Stats returns a snapshot of the pool's accounting.
func (p *Pool) Stats() Stats {
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	// The strategy first: strategy "cuda" reads the driver's reserved bytes
	// there, which the figures below include.
	var st Stats
	if !c.closed {
		c.a.describe(&st)
		if free, total, err := c.src.MemInfo(); err == nil {
			st.DeviceFree, st.DeviceTotal = free, total
		}
	}
	a := p.acct
	st.Used, st.Reserved, st.PeakUsed, st.PeakReserved = a.used, c.reserved, a.peakUsed, a.peakReserved
	st.Requested, st.LiveBlocks = a.requested, a.live
	st.Allocations, st.Frees, st.CacheHits, st.CacheMisses = a.allocations, a.frees, a.hits, a.misses
	st.Reclaims, st.OOMRetries = c.reclaims, a.oomRetries
	st.SoftLimit, st.HardLimit = p.soft, p.hard
	return st
}

// ResetPeak starts PeakUsed and PeakReserved again from the current figures.
func (p *Pool) ResetPeak() {
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	p.acct.peakUsed = p.acct.used
	p.acct.peakReserved = c.reserved
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
