package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/atomicfile"
	"github.com/gluaproject/glua/pool"
	"github.com/gluaproject/glua/profile"
)

// memoryRecord is a recording of memory events (RecordMemory): what
// profile draws. Only the runtime's goroutine touches it.
type memoryRecord struct {
	start time.Time
	// end is when recording stopped; 0 while it runs.
	end    time.Duration
	events eventLog
	limits []profile.Limits
	// live is the bytes the runtime's arrays and its own memory (its
	// workspaces, scratch) hold now, peak the most they held; peakSnap
	// is the pool's segments at the peak (or, see peakDue, close to it),
	// taken when snapLive bytes were live; oomSnap at the last
	// out-of-memory error.
	live, peak, snapLive uint64
	peakSnap, oomSnap    *profile.Snapshot
	// sites are the sites the events name, by their index; siteIndex
	// finds one's, and lastSite and lastIndex are the one found last.
	sites     []site
	siteIndex map[site]uint32
	lastSite  site
	lastIndex uint32
}

// memoryEvent names its site by index into the record's sites: with no
// pointer in it, a log of millions of events is memory Go's collector
// need not scan.
type memoryEvent struct {
	t        time.Duration
	nbytes   uint64
	reserved uint64
	site     uint32
	kind     profile.Kind
}

// eventLog keeps events in chunks of eventChunk: one growing slice
// copied itself on every growth, which made recording an allocation and
// a free from Lua cost 0.7 µs more, most of it in the copies and in the
// collector's work on the discarded arrays; in chunks it costs 0.12 µs
// (BenchmarkAllocFreeFromLuaRecorded against BenchmarkAllocFreeFromLua).
type eventLog struct {
	chunks [][]memoryEvent
	n      int
}

const eventChunk = 8192 // 256 KiB of events

func (l *eventLog) add(e memoryEvent) {
	k := len(l.chunks)
	if k == 0 || len(l.chunks[k-1]) == eventChunk {
		l.chunks = append(l.chunks, make([]memoryEvent, 0, eventChunk))
		k++
	}
	l.chunks[k-1] = append(l.chunks[k-1], e)
	l.n++
}

func (l *eventLog) last() memoryEvent {
	c := l.chunks[len(l.chunks)-1]
	return c[len(c)-1]
}

// ErrNotRecorded is WriteProfile's error when no recording was started.
var ErrNotRecorded = errors.New("no memory events were recorded: start recording first (pool.record(true), Runtime.RecordMemory or glua --memory-profile)")

// RecordMemory starts or stops recording memory events: every allocation
// and free of this runtime's arrays, and of the pool memory it takes for
// itself (cuBLAS workspaces, reduction scratch), with its site (for the
// latter, what it is for), the bytes the pool holds for it, its time and
// the pool's reserved bytes after it; out-of-memory errors; limit
// changes; and the pool's segments at the peak and at the last
// out-of-memory error. Starting begins a new recording whose first events
// are the arrays and workspaces already alive; starting while recording
// carries on. Stopping keeps what was recorded for WriteProfile. While
// nothing is recorded an allocation and a free each cost one branch more.
func (rt *Runtime) RecordMemory(on bool) error {
	if err := rt.usable(); err != nil {
		return err
	}
	if !on {
		if rec := rt.recording.active(); rec != nil {
			rt.snapPeakIfDue(rec, nil, site{})
			rec.end = max(time.Since(rec.start), time.Nanosecond)
			rt.recording.stop()
		}
		return nil
	}
	if rt.recording.active() != nil {
		return nil
	}
	rt.drain()
	rec := &memoryRecord{start: time.Now(), sites: []site{{}}, siteIndex: map[site]uint32{{}: 0}}
	soft, hard := rt.pool.Limits()
	rec.limits = []profile.Limits{{Soft: soft, Hard: hard}}
	reserved := rt.pool.Reserved()
	rec.events.add(memoryEvent{kind: profile.Reserve, reserved: reserved})
	rt.mu.Lock()
	live := rt.mem.buffers.all()
	workspaces := slices.Clone(rt.mem.workspaces)
	rt.mu.Unlock()
	sort.Slice(live, func(i, j int) bool { return live[i].id < live[j].id })
	for _, b := range live {
		rec.events.add(memoryEvent{kind: profile.Alloc, site: rec.index(b.site), nbytes: b.blk.Held(), reserved: reserved})
		rec.live += b.blk.Held()
	}
	for _, blk := range workspaces {
		rec.events.add(memoryEvent{kind: profile.Alloc, site: rec.index(workspaceSite), nbytes: blk.Held(), reserved: reserved})
		rec.live += blk.Held()
	}
	rec.peak = rec.live
	rt.recording.start(rec)
	return nil
}

// recordAlloc notes blk, just allocated at (for) at. It counts the bytes
// blk holds, as the pool's segments show them, not the bytes asked for.
func (rt *Runtime) recordAlloc(rec *memoryRecord, at site, blk *pool.Block) {
	n := blk.Held()
	rec.add(profile.Alloc, at, n, rt.pool.Reserved())
	rec.live += n
	rec.peak = max(rec.peak, rec.live)
}

// recordedFree gives blk, allocated at (for) at, back to p, noting the
// free. The first free after a new peak is the moment to draw the peak's
// segments: blk is still in them.
func (rt *Runtime) recordedFree(rec *memoryRecord, p pool.Allocator, at site, blk *pool.Block) error {
	rt.snapPeakIfDue(rec, blk, at)
	n := blk.Held()
	err := p.Free(blk)
	rec.add(profile.Free, at, n, rt.pool.Reserved())
	rec.live -= min(n, rec.live)
	return err
}

// recordOOM notes an allocation of nbytes at (for) at that failed for want
// of memory, with the pool's segments as they are.
func (rt *Runtime) recordOOM(rec *memoryRecord, at site, nbytes uint64, err error) {
	if !errors.Is(err, device.ErrOutOfMemory) {
		return
	}
	rec.add(profile.OOM, at, nbytes, rt.pool.Reserved())
	rt.snapPeakIfDue(rec, nil, site{})
	snap := rt.segmentsSnapshot(rec, profile.SnapshotOOM, nil, site{})
	snap.Requested, snap.Site = nbytes, at.label()
	rec.oomSnap = &snap
}

// recordReserved notes a change of the pool's reserved bytes that no
// allocation or free made (a release of the cache).
func (rt *Runtime) recordReserved(rec *memoryRecord) {
	if r := rt.pool.Reserved(); r != rec.events.last().reserved {
		rec.add(profile.Reserve, site{}, 0, r)
	}
}

// recordLimits notes new limits.
func (rt *Runtime) recordLimits(rec *memoryRecord) {
	soft, hard := rt.pool.Limits()
	rec.limits = append(rec.limits, profile.Limits{Time: time.Since(rec.start), Soft: soft, Hard: hard})
	rt.recordReserved(rec)
}

func (rec *memoryRecord) add(kind profile.Kind, s site, nbytes, reserved uint64) {
	rec.events.add(memoryEvent{t: time.Since(rec.start), kind: kind, site: rec.index(s), nbytes: nbytes, reserved: reserved})
}

// index is s's index in rec.sites, added if new. A loop allocates at the
// same line again and again, so the last one found is tried first.
func (rec *memoryRecord) index(s site) uint32 {
	if s == rec.lastSite {
		return rec.lastIndex
	}
	i, ok := rec.siteIndex[s]
	if !ok {
		i = uint32(len(rec.sites))
		rec.sites = append(rec.sites, s)
		rec.siteIndex[s] = i
	}
	rec.lastSite, rec.lastIndex = s, i
	return i
}

// peakDue says the segments should be drawn now: live memory is at its
// peak and has grown by a 64th since they last were. Taking them at every
// new peak would cost a walk of the pool each time in a loop whose peak
// creeps up an array at a time; this way a run takes a few hundred at
// most, and the picture is of a moment within 1.6% of the peak.
func (rec *memoryRecord) peakDue() bool {
	return rec.live == rec.peak && rec.peak > 0 && (rec.peakSnap == nil || rec.live > rec.snapLive+rec.snapLive/64)
}

// snapPeakIfDue takes the peak's segments if peakDue; freeing is a block
// being freed, allocated at (for) at, which the pool still holds.
func (rt *Runtime) snapPeakIfDue(rec *memoryRecord, freeing *pool.Block, at site) {
	if !rec.peakDue() {
		return
	}
	snap := rt.segmentsSnapshot(rec, profile.SnapshotPeak, freeing, at)
	rec.peakSnap, rec.snapLive = &snap, rec.live
}

// The names, in a picture of the pool, of a live block the recording has
// no event of: in a shared pool, the other runtimes' arrays, workspaces
// and scratch; in a pool of the runtime's own there is none, unless
// something took memory from it without telling the recording.
const (
	sharedBlock     = "other runtimes sharing the pool"
	unrecordedBlock = "unrecorded"
)

// segmentsSnapshot is the pool's segments now, each live piece named by
// the site that allocated its array, or by what the runtime took it for.
func (rt *Runtime) segmentsSnapshot(rec *memoryRecord, name string, freeing *pool.Block, at site) profile.Snapshot {
	st := rt.pool.Stats()
	segs := rt.pool.Segments()
	sites := make(map[*pool.Block]site)
	rt.mu.Lock()
	for b := rt.mem.buffers.head; b != nil; b = b.next {
		sites[&b.blk] = b.site
	}
	for _, blk := range rt.mem.workspaces {
		sites[blk] = workspaceSite
	}
	rt.mu.Unlock()
	if freeing != nil {
		sites[freeing] = at
	}
	elsewhere := unrecordedBlock
	if rt.shared != nil {
		elsewhere = sharedBlock
	}
	labels := map[site]string{}
	snap := profile.Snapshot{
		Name: name, Time: time.Since(rec.start), Live: rec.live,
		Soft: st.SoftLimit, Hard: st.HardLimit, DeviceFree: st.DeviceFree, DeviceTotal: st.DeviceTotal,
		Segments: make([]profile.Segment, 0, len(segs)),
	}
	for _, s := range segs {
		seg := profile.Segment{Address: uint64(s.Ptr), Size: s.Size, Pieces: make([]profile.Piece, 0, len(s.Pieces))}
		for _, pc := range s.Pieces {
			piece := profile.Piece{Offset: pc.Offset, Size: pc.Size, Live: pc.Block != nil}
			if piece.Live {
				at, ok := sites[pc.Block]
				switch {
				case !ok:
					piece.Site, piece.Holder = elsewhere, profile.HeldElsewhere
				case at.own():
					piece.Site, piece.Holder = labelOf(labels, at), profile.HeldByRuntime
				default:
					piece.Site = labelOf(labels, at)
				}
			}
			seg.Pieces = append(seg.Pieces, piece)
		}
		snap.Segments = append(snap.Segments, seg)
	}
	return snap
}

// labelOf is s.label(), formatted once per site.
func labelOf(labels map[site]string, s site) string {
	l, ok := labels[s]
	if !ok {
		l = s.label()
		labels[s] = l
	}
	return l
}

// MemoryProfile is the latest recording (RecordMemory), running or
// stopped, as package profile draws it; title names the run, the Lua
// chunk running now when empty. ErrNotRecorded when nothing was recorded.
func (rt *Runtime) MemoryProfile(title string) (*profile.Profile, error) {
	if err := rt.usable(); err != nil {
		return nil, err
	}
	rec := rt.recording.latest()
	if rec == nil {
		return nil, ErrNotRecorded
	}
	end := rec.end
	if rec == rt.recording.active() {
		rt.snapPeakIfDue(rec, nil, site{})
		end = time.Since(rec.start)
	}
	if title == "" {
		title = rt.callerSite().source
	}
	p := &profile.Profile{
		Title: title, Created: time.Now(), Device: rt.deviceLabel(), Strategy: rt.pool.Strategy(),
		Duration: end, Limits: append([]profile.Limits(nil), rec.limits...),
		Events: make([]profile.Event, 0, rec.events.n),
	}
	labels := make([]string, len(rec.sites))
	holders := make([]profile.Holder, len(rec.sites))
	for i, s := range rec.sites {
		labels[i] = s.label()
		if s.own() {
			holders[i] = profile.HeldByRuntime
		}
	}
	for _, c := range rec.events.chunks {
		for _, e := range c {
			ev := profile.Event{Time: e.t, Kind: e.kind, NBytes: e.nbytes, Reserved: e.reserved}
			if e.kind != profile.Reserve {
				ev.Site, ev.Holder = labels[e.site], holders[e.site]
			}
			p.Events = append(p.Events, ev)
		}
	}
	for _, s := range []*profile.Snapshot{rec.peakSnap, rec.oomSnap} {
		if s != nil {
			p.Snapshots = append(p.Snapshots, *s)
		}
	}
	return p, nil
}

// deviceLabel says where the memory was, e.g. "cpu backend: CPU (16 threads)".
func (rt *Runtime) deviceLabel() string {
	info, err := rt.backend.Info()
	if err != nil {
		return rt.backend.Name() + " backend"
	}
	return rt.backend.Name() + " backend: " + info.Name
}

// WriteProfile writes the latest recording to w as one self-contained
// HTML page (see MemoryProfile and package profile).
func (rt *Runtime) WriteProfile(w io.Writer, title string) error {
	p, err := rt.MemoryProfile(title)
	if err != nil {
		return err
	}
	return profile.Write(w, p)
}

// DumpProfile writes the latest recording to the file at path as one
// self-contained HTML page (see WriteProfile). Nothing is written when
// nothing was recorded. The page is written beside path and renamed into
// place when whole, as .npy files are, so that path holds the previous
// profile or the new one, never part of one.
func (rt *Runtime) DumpProfile(path, title string) error {
	p, err := rt.MemoryProfile(title)
	if err != nil {
		return err
	}
	err = atomicfile.Replace(path, func(f *os.File) error {
		err := profile.Write(f, p)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
