package profile

import (
	"fmt"
	"sort"
	"time"
)

// topSites is how many sites the timeline stacks on their own; the rest
// are one band, "other". Eight colours stay told apart at a glance.
const topSites = 8

// maxBuckets bounds the timeline's points: each bucket of time gives at
// most two (its highest moment and its last), so a run of millions of
// events still draws as a page of a few hundred kilobytes, with every
// peak kept.
const maxBuckets = 700

// otherSite names the band of every site not drawn on its own.
const otherSite = "other sites"

// siteStats is one allocation site over the run.
type siteStats struct {
	name string
	// live and arrays are the bytes and arrays held now (during the walk)
	// and at the end; peak and arraysAtPeak are at the site's own peak.
	live, peak           uint64
	arrays, arraysAtPeak int
	allocs               int
	band                 int // index in the timeline's bands
	// holder is HeldByRuntime for memory the runtime took for itself:
	// its blocks are not arrays.
	holder Holder
}

// point is the timeline at one moment: the bytes live in each band and
// the reserved bytes.
type point struct {
	t        time.Duration
	bands    []uint64
	reserved uint64
}

func (p point) total() uint64 {
	var n uint64
	for _, v := range p.bands {
		n += v
	}
	return n
}

// analysis is what the page shows of the events.
type analysis struct {
	sites []*siteStats // by peak bytes, largest first
	bands []string     // the timeline's bands, bottom first: top sites, then otherSite if any
	// points is the timeline, thinned to maxBuckets.
	points []point
	end    time.Duration

	peakLive     uint64
	peakLiveAt   time.Duration
	peakReserved uint64
	allocs       int
	frees        int
	ooms         []Event
}

func siteName(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// analyse walks the events twice: once for each site's figures, which
// rank the sites, then for the timeline's bands of the top ones.
func analyse(p *Profile) (*analysis, error) {
	a := &analysis{end: p.Duration}
	bySite := map[string]*siteStats{}
	var live uint64
	var last time.Duration
	for i, e := range p.Events {
		if e.Time < last || e.Time < 0 {
			return nil, fmt.Errorf("profile: event %d (%s at %v) is out of time order", i, e.Kind, e.Time)
		}
		last = e.Time
		a.end = max(a.end, e.Time)
		a.peakReserved = max(a.peakReserved, e.Reserved)
		switch e.Kind {
		case Alloc, Free:
		case OOM:
			a.ooms = append(a.ooms, e)
			continue
		case Reserve:
			continue
		default:
			return nil, fmt.Errorf("profile: event %d has an unknown kind %d", i, e.Kind)
		}
		name := siteName(e.Site)
		s := bySite[name]
		if s == nil {
			s = &siteStats{name: name, holder: e.Holder}
			bySite[name] = s
			a.sites = append(a.sites, s)
		}
		if e.Kind == Alloc {
			a.allocs++
			s.allocs++
			s.arrays++
			s.live += e.NBytes
			live += e.NBytes
			if s.live > s.peak {
				s.peak, s.arraysAtPeak = s.live, s.arrays
			}
			if live > a.peakLive {
				a.peakLive, a.peakLiveAt = live, e.Time
			}
			continue
		}
		a.frees++
		s.arrays = max(s.arrays-1, 0)
		n := min(e.NBytes, s.live) // a free of an array allocated before the recording
		s.live -= n
		live -= n
	}
	sort.SliceStable(a.sites, func(i, j int) bool {
		if a.sites[i].peak != a.sites[j].peak {
			return a.sites[i].peak > a.sites[j].peak
		}
		return a.sites[i].name < a.sites[j].name
	})
	for i, s := range a.sites {
		s.band = min(i, topSites)
		if i < topSites {
			a.bands = append(a.bands, s.name)
		}
	}
	if len(a.sites) > topSites {
		a.bands = append(a.bands, otherSite)
	}
	a.timeline(p.Events, bySite)
	return a, nil
}

// timeline fills a.points: for each bucket of time that has events, the
// moment in it with the most live bytes (so no peak is lost) and, if
// later, its last moment (so that the level after it is right). Reserved
// is the highest in the bucket, for the same reason.
func (a *analysis) timeline(events []Event, bySite map[string]*siteStats) {
	cur := point{bands: make([]uint64, len(a.bands))}
	a.points = append(a.points, point{bands: make([]uint64, len(a.bands))})
	if len(events) == 0 {
		return
	}
	span := max(a.end, time.Nanosecond)
	bucketOf := func(t time.Duration) int {
		return int(min(float64(t)/float64(span)*maxBuckets, maxBuckets-1))
	}
	var (
		bucket    = -1
		high      point // the bucket's highest moment, when haveHigh
		haveHigh  bool
		highTotal uint64
		maxRes    uint64
		lastT     time.Duration
		total     uint64
	)
	copyOf := func(p point) point {
		p.bands = append([]uint64(nil), p.bands...)
		return p
	}
	flush := func() {
		if !haveHigh {
			return
		}
		high.reserved = max(high.reserved, maxRes)
		a.points = append(a.points, high)
		if lastT > high.t {
			end := copyOf(cur)
			end.t = lastT
			a.points = append(a.points, end)
		}
	}
	for _, e := range events {
		if b := bucketOf(e.Time); b != bucket {
			flush()
			bucket, haveHigh, maxRes = b, false, 0
		}
		cur.t, cur.reserved = e.Time, e.Reserved
		if e.Kind == Alloc || e.Kind == Free {
			band := bySite[siteName(e.Site)].band
			if e.Kind == Alloc {
				cur.bands[band] += e.NBytes
				total += e.NBytes
			} else {
				n := min(e.NBytes, cur.bands[band])
				cur.bands[band] -= n
				total -= n
			}
		}
		maxRes = max(maxRes, e.Reserved)
		lastT = e.Time
		if !haveHigh || total > highTotal {
			high, haveHigh, highTotal = copyOf(cur), true, total
		}
	}
	flush()
	// The level at the end holds until the recording stopped.
	if end := a.points[len(a.points)-1]; end.t < a.end {
		end = copyOf(cur)
		end.t = a.end
		a.points = append(a.points, end)
	}
}
