package runtime

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
)

// LiveBlock describes one live allocation for Snapshot.
type LiveBlock struct {
	ID     uint64
	NBytes uint64 // bytes asked for
	DType  device.DType
	Shape  []int
	Stream device.Stream
	// Site is the Lua source line that allocated it ("" from Go).
	Site string
}

// Snapshot lists every live allocation of this runtime, oldest first.
func (rt *Runtime) Snapshot() []LiveBlock {
	rt.drain()
	rt.mu.Lock()
	out := make([]LiveBlock, 0, rt.mem.buffers.n)
	for b := rt.mem.buffers.head; b != nil; b = b.next {
		out = append(out, LiveBlock{
			ID: b.id, NBytes: b.blk.Size, DType: b.dtype, Shape: append([]int(nil), b.shape...),
			Stream: b.blk.Stream, Site: b.site.String(),
		})
	}
	rt.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// SiteUsage is the live memory allocated at one source line.
type SiteUsage struct {
	Site   string
	Arrays int
	NBytes uint64
}

// Usage groups live memory by allocation site, largest first: the answer to
// "what holds my memory".
func (rt *Runtime) Usage() []SiteUsage {
	bySite := map[string]*SiteUsage{}
	for _, b := range rt.Snapshot() {
		site := b.Site
		if site == "" {
			site = goSite
		}
		u := bySite[site]
		if u == nil {
			u = &SiteUsage{Site: site}
			bySite[site] = u
		}
		u.Arrays++
		u.NBytes += b.NBytes
	}
	out := make([]SiteUsage, 0, len(bySite))
	for _, u := range bySite {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].NBytes != out[j].NBytes {
			return out[i].NBytes > out[j].NBytes
		}
		return out[i].Site < out[j].Site
	})
	return out
}

// Report is Usage as text, followed by the pool's summary and, once any
// was taken, the count of overlap temporaries (OverlapTemporaries).
func (rt *Runtime) Report() string {
	var b strings.Builder
	usage := rt.Usage()
	var total uint64
	for _, u := range usage {
		total += u.NBytes
	}
	fmt.Fprintf(&b, "Live device memory by allocation site: %s in %s\n", config.FormatSize(total), plural(len(usage), "place", "places"))
	for _, u := range usage {
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(u.NBytes) / float64(total)
		}
		noun := "arrays"
		if u.Arrays == 1 {
			noun = "array"
		}
		fmt.Fprintf(&b, "  %10s %5.1f%%  %5d %-6s  %s\n", config.FormatSize(u.NBytes), pct, u.Arrays, noun, u.Site)
	}
	b.WriteString(rt.Status())
	if n, nbytes := rt.OverlapTemporaries(); n > 0 {
		fmt.Fprintf(&b, "\nOverlap temporaries: %d (%s in all), taken for outputs that partly overlapped an input", n, config.FormatSize(nbytes))
	}
	return b.String()
}
