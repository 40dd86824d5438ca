package pool

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gluaproject/glua/device"
	"github.com/google/btree"
)

// Sizes of the caching strategy. A cuMemAlloc took ~133 µs on an H100, so
// memory is drawn from the source in segments that serve many blocks, and a
// freed block is kept to serve the next request of a similar size.
const (
	// granularity is the unit every block size is rounded up to: the driver
	// aligns allocations to 256 bytes, and 512 keeps the number of distinct
	// sizes (and tree entries) down at a cost of at most 511 bytes a block.
	granularity = 512
	// Requests up to smallMax are small: they share smallSegment-sized
	// segments of their own, so that many short-lived small blocks do not
	// pin down the big segments large blocks need. 2 MiB is the driver's
	// large-page size; smallMax is an eighth of it so that a segment saves
	// at least eight driver calls, while one live block pins at most 2 MiB.
	// (PyTorch's 1 MiB puts two 1 MiB blocks in a segment: free one of
	// them and the other still pins the segment.)
	smallMax     = 256 << 10
	smallSegment = 2 << 20
	// A request above smallMax gets a segment of its own: sharing one
	// segment among several (PyTorch's 20 MiB buffers for 1-10 MiB) saves
	// driver calls on the first pass but lets one live block pin the
	// freed space around it, so that no large block fits even after the
	// cache is released (see TestFragmentationLeavesRoomForALargeBlock).
	// Once cached, such a segment serves later requests like any other,
	// split for smaller ones. Above midMax, segments are rounded to
	// largeRound (the driver's page) so that a freed one can serve a
	// slightly larger request; below it they are exact, since rounding a
	// 1.5 MiB block to 2 MiB would cost a third of it.
	midMax       = 10 << 20
	largeSegment = 20 << 20 // the shared segment size, when shareMid is set
	largeRound   = 2 << 20
	// treeDegree suits trees of a few hundred to a few thousand blocks.
	treeDegree = 16
	// recentMax is how many freed chunks wait, unmerged, to serve a
	// request of exactly their size before they go into the trees. A loop
	// that allocates and frees the same sizes then costs no tree
	// operation; anything that needs the whole picture (a request nothing
	// in recent fits, a release, Stats) puts them into the trees first.
	recentMax = 8
)

func roundUp(n, unit uint64) uint64 { return (n + unit - 1) / unit * unit }

// segmentSize is how much to ask of the source for a request of size bytes.
func (x *caching) segmentSize(size uint64) uint64 {
	switch {
	case size <= smallMax:
		return smallSegment
	case size <= midMax && x.shareMid:
		return largeSegment
	case size <= midMax:
		return size
	default:
		return roundUp(size, largeRound)
	}
}

// segment is one allocation from the source, cut into chunks.
type segment struct {
	ptr   device.Ptr
	size  uint64
	small bool
	first *chunk // the lowest-addressed chunk
	// emptyAt is the segment's index in caching.empty, -1 when not there.
	emptyAt int
}

type chunkState uint8

const (
	chunkLive    chunkState = iota // held by a Block
	chunkFree                      // in a free tree
	chunkWaiting                   // freed, waiting for other streams (RecordStream)
	chunkHeld                      // freed, but its other streams could not be fenced: kept until Close
	chunkCached                    // freed, in caching.recent: not merged, not in a tree
)

// chunk is a piece of a segment: a live block or free memory. A segment's
// chunks tile it in address order (prev, next).
type chunk struct {
	seg        *segment
	ptr        device.Ptr
	size       uint64
	prev, next *chunk
	state      chunkState
	block      *Block

	// A free chunk is bound to the stream it was freed on (bound true)
	// until an event on that stream says the work queued before the free
	// is done; until then only that stream may reuse it. seq orders frees,
	// so that one event covers every free before it was recorded.
	bound  bool
	stream device.Stream
	seq    uint64
	events []device.Event // chunkWaiting: one per stream from RecordStream
}

// chunkLess orders a free tree: unbound chunks first, then bound ones
// grouped by stream; within a group by size (best fit is the first chunk at
// or above the size wanted), then address.
func chunkLess(a, b *chunk) bool {
	if a.bound != b.bound {
		return !a.bound
	}
	if a.bound && a.stream != b.stream {
		return a.stream < b.stream
	}
	if a.size != b.size {
		return a.size < b.size
	}
	return a.ptr < b.ptr
}

// fence is the event that frees on one stream wait on before the memory
// may serve another stream. It is recorded lazily: a free only notes its
// sequence number in last, and the event is recorded when another stream
// looks for memory, when the cache is trimmed or at a synchronisation
// point. A program that uses one stream never records one, and a free
// costs no driver call.
type fence struct {
	ev      device.Event
	ok      bool   // ev exists
	pending bool   // ev recorded and not yet seen done
	seq     uint64 // frees up to seq are covered by ev, or known done
	done    uint64 // frees up to done are known to be done
	last    uint64 // the latest free on the stream
}

// caching is strategy "caching".
type caching struct {
	c            *core
	small, large *btree.BTreeG[*chunk]
	segs         map[*segment]struct{}
	// empty holds the segments that are a single free chunk: the ones
	// release can return to the source. A slice with each segment's index
	// in it, because this changes on nearly every allocation and free and
	// a map's hashing showed in the profile.
	empty   []*segment
	waiting []*chunk
	recent  []*chunk // chunkCached, oldest first
	fences  map[device.Stream]*fence
	// The fence of the stream freed on last: most frees are on the same
	// stream as the one before, and the map lookup showed in the profile.
	lastStream  device.Stream
	lastFence   *fence
	seq         uint64
	spare       []device.Event // recorded-and-done events, for reuse
	spareChunks []*chunk
	// shareMid draws mid-size requests from shared largeSegment segments
	// instead of their own; the tests and benchmarks compare the two.
	shareMid bool

	// Search state, kept here so that a lookup allocates nothing.
	pivot chunk
	found *chunk
	first func(*chunk) bool
}

func newCaching(c *core) *caching {
	x := &caching{
		c:      c,
		small:  btree.NewG(treeDegree, chunkLess),
		large:  btree.NewG(treeDegree, chunkLess),
		segs:   make(map[*segment]struct{}),
		fences: make(map[device.Stream]*fence),
	}
	x.first = func(ch *chunk) bool { x.found = ch; return false }
	return x
}

func (x *caching) tree(small bool) *btree.BTreeG[*chunk] {
	if small {
		return x.small
	}
	return x.large
}

func (x *caching) round(nbytes uint64) (uint64, bool) {
	if nbytes > math.MaxUint64-largeRound {
		return 0, false
	}
	return roundUp(nbytes, granularity), true
}

// ceiling is the first chunk at or after the pivot (bound, s, size).
func (x *caching) ceiling(t *btree.BTreeG[*chunk], bound bool, s device.Stream, size uint64) *chunk {
	x.setPivot(bound, s, size)
	x.found = nil
	t.AscendGreaterOrEqual(&x.pivot, x.first)
	return x.found
}

// setPivot sets only the fields chunkLess reads: the pivot holds no
// pointers, and assigning a whole chunk would clear them with write barriers.
func (x *caching) setPivot(bound bool, s device.Stream, size uint64) {
	x.pivot.bound, x.pivot.stream, x.pivot.size, x.pivot.ptr = bound, s, size, 0
}

// bestFit is the smallest free chunk of at least size that stream s may
// use: an unbound one, or one bound to s itself (stream order makes reuse
// on the same stream safe).
func (x *caching) bestFit(size uint64, s device.Stream) *chunk {
	t := x.tree(size <= smallMax)
	best := x.ceiling(t, false, 0, size)
	if best != nil && best.bound {
		best = nil
	}
	if x.c.events != nil {
		own := x.ceiling(t, true, s, size)
		if own != nil && own.bound && own.stream == s && (best == nil || own.size <= best.size) {
			best = own
		}
	}
	return best
}

func (x *caching) alloc(b *Block) (bool, error) {
	if ch := x.fromRecent(b.rounded, b.Stream); ch != nil {
		ch.state, ch.block, ch.bound = chunkLive, b, false
		b.ch, b.Ptr = ch, ch.ptr
		return true, nil
	}
	x.flushRecent()
	ch := x.bestFit(b.rounded, b.Stream)
	if ch == nil && x.c.events != nil {
		// Memory other streams freed may be done with by now.
		x.coverAll(b.Stream, true)
		if x.poll() {
			ch = x.bestFit(b.rounded, b.Stream)
		}
	}
	if ch != nil {
		x.take(ch, b)
		return true, nil
	}
	ch, err := x.grow(b.rounded)
	if err != nil {
		return false, err
	}
	x.take(ch, b)
	return false, nil
}

// fromRecent takes from recent the newest chunk of exactly size bytes that
// stream s may use, if there is one.
func (x *caching) fromRecent(size uint64, s device.Stream) *chunk {
	for i := len(x.recent) - 1; i >= 0; i-- {
		ch := x.recent[i]
		if ch.size == size && (!ch.bound || ch.stream == s) {
			x.recent = slices.Delete(x.recent, i, i+1)
			return ch
		}
	}
	return nil
}

// toRecent keeps freed chunk ch in recent, moving the oldest into the
// trees when recent is full.
func (x *caching) toRecent(ch *chunk) {
	if len(x.recent) == recentMax {
		old := x.recent[0]
		x.recent = slices.Delete(x.recent, 0, 1)
		x.insertFree(old)
	}
	ch.state = chunkCached
	x.recent = append(x.recent, ch)
}

// flushRecent puts every chunk waiting in recent into the trees, merged.
func (x *caching) flushRecent() {
	for i, ch := range x.recent {
		x.recent[i] = nil
		x.insertFree(ch)
	}
	x.recent = x.recent[:0]
}

// grow draws a new segment for a request of size bytes. When the segment
// would pass the hard limit or the device has no room for it, it asks for
// just the request.
func (x *caching) grow(size uint64) (*chunk, error) {
	want := x.segmentSize(size)
	ptr, err := x.c.sourceAlloc(want)
	if err != nil && isOOM(err) && want > size {
		want = size
		ptr, err = x.c.sourceAlloc(want)
	}
	if err != nil {
		return nil, err
	}
	seg := &segment{ptr: ptr, size: want, small: size <= smallMax, emptyAt: -1}
	ch := &chunk{seg: seg, ptr: ptr, size: want, state: chunkFree}
	seg.first = ch
	x.segs[seg] = struct{}{}
	return ch, nil
}

// take gives ch (free, in a tree or new) to b, splitting off what b does
// not need as a free chunk of the same binding.
func (x *caching) take(ch *chunk, b *Block) {
	x.removeFree(ch)
	ch.state, ch.block = chunkLive, b // before the split, so the rest cannot merge back
	if rest := ch.size - b.rounded; rest > 0 {
		nc := x.newChunk()
		*nc = chunk{seg: ch.seg, ptr: ch.ptr + device.Ptr(b.rounded), size: rest,
			prev: ch, next: ch.next, bound: ch.bound, stream: ch.stream, seq: ch.seq}
		if ch.next != nil {
			ch.next.prev = nc
		}
		ch.next = nc
		ch.size = b.rounded
		x.insertFree(nc)
	}
	ch.bound = false
	b.ch, b.Ptr = ch, ch.ptr
}

// removeFree takes ch out of its free tree (if it is in one).
func (x *caching) removeFree(ch *chunk) {
	if ch.state != chunkFree {
		return
	}
	x.tree(ch.seg.small).Delete(ch)
	if ch.prev == nil && ch.next == nil {
		x.unmarkEmpty(ch.seg)
	}
}

// newChunk is a recycled chunk or a new one: splitting on every small
// allocation and merging on every free would otherwise cost a heap
// allocation each.
func (x *caching) newChunk() *chunk {
	if n := len(x.spareChunks); n > 0 {
		ch := x.spareChunks[n-1]
		x.spareChunks = x.spareChunks[:n-1]
		return ch
	}
	return new(chunk)
}

// dropChunk keeps a chunk merged away for reuse, up to a bound.
func (x *caching) dropChunk(ch *chunk) {
	if len(x.spareChunks) < 256 {
		*ch = chunk{}
		x.spareChunks = append(x.spareChunks, ch)
	}
}

// unmarkEmpty takes seg out of the empty list.
func (x *caching) unmarkEmpty(seg *segment) {
	i := seg.emptyAt
	if i < 0 {
		return
	}
	last := len(x.empty) - 1
	x.empty[i] = x.empty[last]
	x.empty[i].emptyAt = i
	x.empty[last] = nil
	x.empty = x.empty[:last]
	seg.emptyAt = -1
}

// mergeable reports whether free neighbour n may join ch: both free and
// bound alike, so that the merged chunk's binding holds for all of it.
func mergeable(ch, n *chunk) bool {
	return n.state == chunkFree && n.bound == ch.bound && (!ch.bound || n.stream == ch.stream)
}

// insertFree puts ch (not in a tree) into its free tree, merged with free
// neighbours of the same binding.
func (x *caching) insertFree(ch *chunk) {
	if ch.bound {
		// A chunk that waited for other streams may come back after its
		// own stream's fence was already seen done, or forgotten (which
		// happens only once every free on the stream is done; see
		// synchronized).
		if f := x.fences[ch.stream]; f == nil || ch.seq <= f.done {
			ch.bound = false
		}
	}
	if p := ch.prev; p != nil && mergeable(ch, p) {
		x.removeFree(p)
		x.absorb(p, ch)
		ch = p
	}
	if n := ch.next; n != nil && mergeable(ch, n) {
		x.removeFree(n)
		x.absorb(ch, n)
	}
	ch.state = chunkFree
	x.tree(ch.seg.small).ReplaceOrInsert(ch)
	if ch.prev == nil && ch.next == nil {
		ch.seg.emptyAt = len(x.empty)
		x.empty = append(x.empty, ch.seg)
	}
}

// absorb merges chunk r into its left neighbour l.
func (x *caching) absorb(l, r *chunk) {
	l.size += r.size
	l.seq = max(l.seq, r.seq)
	l.next = r.next
	if r.next != nil {
		r.next.prev = l
	}
	x.dropChunk(r)
}

func (x *caching) free(b *Block) error {
	ch := b.ch
	b.ch = nil
	ch.block = nil
	ev := x.c.events
	if ev == nil {
		// A synchronous source: the work is done, any stream may reuse it.
		ch.bound = false
		x.toRecent(ch)
		return nil
	}
	x.seq++
	ch.bound, ch.stream, ch.seq = true, b.Stream, x.seq
	if x.lastFence == nil || x.lastStream != b.Stream {
		x.lastStream, x.lastFence = b.Stream, x.fenceOf(b.Stream)
	}
	x.lastFence.last = x.seq
	if len(b.uses) == 0 {
		x.toRecent(ch)
		return nil
	}
	// The block was used on other streams too: it waits for each of them
	// before any reuse, even on its own stream.
	for _, s := range b.uses {
		e, err := x.event()
		if err == nil {
			if err = ev.Record(e, s); err != nil {
				x.spare = append(x.spare, e)
			}
		}
		if err != nil {
			x.spare = append(x.spare, ch.events...)
			ch.events = nil
			ch.state = chunkHeld
			return fmt.Errorf("recording the block's use on stream %#x (its %s are kept until the pool closes): %w",
				uintptr(s), formatBytes(ch.size), err)
		}
		ch.events = append(ch.events, e)
	}
	ch.state = chunkWaiting
	x.waiting = append(x.waiting, ch)
	return nil
}

// fenceOf is stream s's fence, made on first use.
func (x *caching) fenceOf(s device.Stream) *fence {
	f := x.fences[s]
	if f == nil {
		f = &fence{}
		x.fences[s] = f
	}
	return f
}

// cover records stream s's event so that it covers every free on s so far,
// unless it already does. Re-recording a pending event moves it later: the
// memory freed earlier then waits a little longer, but one event per
// stream is enough.
func (x *caching) cover(s device.Stream, f *fence) {
	if f.last <= f.seq {
		return
	}
	if !f.ok {
		e, err := x.event()
		if err != nil {
			return // the chunks stay bound to s until the device is synchronised
		}
		f.ev, f.ok = e, true
	}
	if err := x.c.events.Record(f.ev, s); err != nil {
		return
	}
	f.pending, f.seq = true, f.last
}

// coverAll records the fence of every stream with frees not yet covered,
// except stream skip (whose own memory is usable to it already).
func (x *caching) coverAll(skip device.Stream, skipping bool) {
	for s, f := range x.fences {
		if !skipping || s != skip {
			x.cover(s, f)
		}
	}
}

// event is a spare event or a new one.
func (x *caching) event() (device.Event, error) {
	if n := len(x.spare); n > 0 {
		e := x.spare[n-1]
		x.spare = x.spare[:n-1]
		return e, nil
	}
	return x.c.events.NewEvent()
}

// poll looks at outstanding events without waiting, and makes the memory
// they guarded usable; it reports whether any became so.
func (x *caching) poll() bool {
	ev := x.c.events
	if ev == nil {
		return false
	}
	promoted := false
	kept := x.waiting[:0]
	for _, ch := range x.waiting {
		if !allDone(ev, ch.events) {
			kept = append(kept, ch)
			continue
		}
		x.spare = append(x.spare, ch.events...)
		ch.events = nil
		x.insertFree(ch)
		promoted = true
	}
	clear(x.waiting[len(kept):])
	x.waiting = kept
	for s, f := range x.fences {
		if !f.pending {
			continue
		}
		if done, err := ev.EventDone(f.ev); err != nil || !done {
			continue
		}
		// The event goes back to the spares, so that a program creating
		// stream after stream holds events only for fences in flight; the
		// fence keeps how far its stream is known done.
		f.pending, f.done, f.ok = false, f.seq, false
		x.spare = append(x.spare, f.ev)
		if x.promote(s, f.seq) {
			promoted = true
		}
	}
	return promoted
}

func allDone(ev EventSource, events []device.Event) bool {
	for _, e := range events {
		if done, err := ev.EventDone(e); err != nil || !done {
			return false
		}
	}
	return true
}

// promote unbinds the free chunks of stream s freed up to seq upto.
func (x *caching) promote(s device.Stream, upto uint64) bool {
	var list []*chunk
	for _, t := range []*btree.BTreeG[*chunk]{x.small, x.large} {
		x.setPivot(true, s, 0)
		t.AscendGreaterOrEqual(&x.pivot, func(ch *chunk) bool {
			if !ch.bound || ch.stream != s {
				return false
			}
			if ch.seq <= upto {
				list = append(list, ch)
			}
			return true
		})
	}
	// Each chunk is unbound in turn; it may merge with an already unbound
	// neighbour, never with one still on the list (those are bound).
	for _, ch := range list {
		x.removeFree(ch)
		ch.bound = false
		x.insertFree(ch)
	}
	return len(list) > 0
}

// settle makes every freed chunk usable on any stream, waiting for the
// device when the source can; otherwise it only polls. Its caller, release,
// has already put recent into the trees.
func (x *caching) settle() error {
	if x.c.events == nil {
		return nil
	}
	if x.c.syncer == nil || (len(x.waiting) == 0 && !x.anyBound()) {
		x.coverAll(0, false)
		x.poll()
		return nil
	}
	if err := x.c.syncer.Synchronize(); err != nil {
		return fmt.Errorf("synchronising the device: %w", err)
	}
	for _, ch := range x.waiting {
		x.spare = append(x.spare, ch.events...)
		ch.events = nil
		x.insertFree(ch)
	}
	x.waiting = x.waiting[:0]
	for s, f := range x.fences {
		if f.ok {
			x.spare = append(x.spare, f.ev)
		}
		f.pending, f.seq, f.done, f.ok = false, x.seq, x.seq, false
		x.promote(s, math.MaxUint64)
	}
	return nil
}

// anyBound reports whether some free chunk is still bound to a stream.
func (x *caching) anyBound() bool {
	for _, t := range []*btree.BTreeG[*chunk]{x.small, x.large} {
		if last, ok := t.Max(); ok && last.bound {
			return true
		}
	}
	return false
}

func (x *caching) release(nbytes uint64, thorough bool) (uint64, error) {
	x.flushRecent()
	var settleErr error
	if thorough {
		settleErr = x.settle()
	} else {
		// Only segments bound to a stream, and free, are worth an event.
		for _, seg := range x.empty {
			if ch := seg.first; ch.bound {
				x.cover(ch.stream, x.fenceOf(ch.stream))
			}
		}
		x.poll()
	}
	var cands []*segment
	for _, seg := range x.empty {
		if !seg.first.bound {
			cands = append(cands, seg)
		}
	}
	// Largest first: fewest driver calls for the bytes wanted.
	slices.SortFunc(cands, func(a, b *segment) int {
		if a.size != b.size {
			if a.size > b.size {
				return -1
			}
			return 1
		}
		if a.ptr < b.ptr {
			return -1
		}
		return 1
	})
	var released uint64
	var errs []error
	for _, seg := range cands {
		if nbytes > 0 && released >= nbytes {
			break
		}
		x.removeFree(seg.first)
		delete(x.segs, seg)
		if err := x.c.sourceFree(seg.ptr, seg.size); err != nil {
			errs = append(errs, err)
			continue
		}
		x.c.reclaims++
		released += seg.size
	}
	if settleErr != nil {
		errs = append(errs, settleErr)
	}
	return released, errors.Join(errs...)
}

// synchronized covers every stream's frees and polls: after a
// synchronisation the events are done as soon as they are recorded.
func (x *caching) synchronized() {
	x.flushRecent()
	if x.c.events == nil {
		return
	}
	x.coverAll(0, false)
	x.poll()
	// A stream whose every free is known done has nothing bound to it any
	// more: forget its fence, so that a program (or a shared pool) going
	// through many short-lived streams does not keep one for each.
	for s, f := range x.fences {
		if !f.pending && !f.ok && f.last <= f.done {
			delete(x.fences, s)
			if x.lastFence == f {
				x.lastFence = nil
			}
		}
	}
}

func (x *caching) limitsChanged(soft, hard uint64) error { return nil }

func (x *caching) describe(st *Stats) {
	x.flushRecent()
	st.Segments = len(x.segs)
	for _, t := range []*btree.BTreeG[*chunk]{x.small, x.large} {
		t.Ascend(func(ch *chunk) bool {
			st.LargestFreeBlock = max(st.LargestFreeBlock, ch.size)
			return true
		})
	}
}

func (x *caching) close() error {
	var errs []error
	if x.c.syncer != nil && x.c.events != nil {
		if err := x.c.syncer.Synchronize(); err != nil {
			errs = append(errs, err)
		}
	}
	for seg := range x.segs {
		for ch := seg.first; ch != nil; ch = ch.next {
			if ch.block != nil {
				ch.block.freed = true
				ch.block.ch = nil
			}
			x.spare = append(x.spare, ch.events...)
		}
		if err := x.c.sourceFree(seg.ptr, seg.size); err != nil {
			errs = append(errs, err)
		}
	}
	if ev := x.c.events; ev != nil {
		for _, f := range x.fences {
			if f.ok {
				x.spare = append(x.spare, f.ev)
			}
		}
		for _, e := range x.spare {
			if err := ev.DestroyEvent(e); err != nil {
				errs = append(errs, err)
			}
		}
	}
	clear(x.segs)
	x.empty = nil
	clear(x.fences)
	x.lastFence = nil
	x.small.Clear(false)
	x.large.Clear(false)
	x.waiting, x.spare, x.recent = nil, nil, nil
	return errors.Join(errs...)
}
