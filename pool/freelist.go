package pool

import (
	"slices"

	"github.com/gluaproject/glua/device"
	"github.com/google/btree"
)

// treeDegree suits trees of a few hundred to a few thousand blocks.
const treeDegree = 16

// segment is one allocation from the source, cut into chunks.
type segment struct {
	ptr   device.Ptr
	size  uint64
	small bool
	first *chunk // the lowest-addressed chunk
	// emptyAt is the segment's index in freeList.empty, -1 when not there.
	emptyAt int
}

type chunkState uint8

const (
	chunkLive    chunkState = iota // held by a Block
	chunkFree                      // in a free tree
	chunkWaiting                   // freed, waiting for other streams (RecordStream)
	chunkHeld                      // freed, but its other streams could not be fenced: kept until Close
	chunkCached                    // freed, in the stream order's recent: not merged, not in a tree
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

	// binding is which streams may reuse the chunk once it is free: the
	// stream order sets it, the free list keeps each binding's chunks
	// together and merges only within one.
	binding
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

// freeList is the caching strategy's memory: the segments drawn from the
// source, each tiled by chunks, and the free chunks in ordered sets for a
// best-fit search. A request takes the smallest free chunk that fits and
// splits off the rest; a free chunk merges with free neighbours of the
// same binding. Of streams it knows only the binding each chunk carries.
//
// Small and large requests have trees (and segments) of their own, so
// that many short-lived small blocks do not pin down the segments large
// blocks need.
type freeList struct {
	small, large *btree.BTreeG[*chunk]
	segs         map[*segment]struct{}
	// empty holds the segments that are a single free chunk: the ones
	// that can go back to the source. A slice with each segment's index
	// in it, because this changes on nearly every allocation and free and
	// a map's hashing showed in the profile.
	empty       []*segment
	spareChunks []*chunk

	// Search state, kept here so that a lookup allocates nothing.
	pivot chunk
	found *chunk
	first func(*chunk) bool
}

func newFreeList() *freeList {
	l := &freeList{
		small: btree.NewG(treeDegree, chunkLess),
		large: btree.NewG(treeDegree, chunkLess),
		segs:  make(map[*segment]struct{}),
	}
	l.first = func(ch *chunk) bool { l.found = ch; return false }
	return l
}

func (l *freeList) tree(small bool) *btree.BTreeG[*chunk] {
	if small {
		return l.small
	}
	return l.large
}

// ceiling is the first chunk at or after the pivot (bound, s, size).
func (l *freeList) ceiling(t *btree.BTreeG[*chunk], bound bool, s device.Stream, size uint64) *chunk {
	l.setPivot(bound, s, size)
	l.found = nil
	t.AscendGreaterOrEqual(&l.pivot, l.first)
	return l.found
}

// setPivot sets only the fields chunkLess reads: the pivot holds no
// pointers, and assigning a whole chunk would clear them with write barriers.
func (l *freeList) setPivot(bound bool, s device.Stream, size uint64) {
	l.pivot.bound, l.pivot.stream, l.pivot.size, l.pivot.ptr = bound, s, size, 0
}

// bestFit is the smallest free chunk of at least size bytes in the small
// or large tree that is unbound or, when own is set, bound to stream s.
func (l *freeList) bestFit(size uint64, small bool, s device.Stream, own bool) *chunk {
	t := l.tree(small)
	best := l.ceiling(t, false, 0, size)
	if best != nil && best.bound {
		best = nil
	}
	if own {
		o := l.ceiling(t, true, s, size)
		if o != nil && o.bound && o.stream == s && (best == nil || o.size <= best.size) {
			best = o
		}
	}
	return best
}

// addSegment takes in size bytes at ptr from the source, for the small or
// the large tree, as one free chunk that is in no tree yet: take it next.
func (l *freeList) addSegment(ptr device.Ptr, size uint64, small bool) *chunk {
	seg := &segment{ptr: ptr, size: size, small: small, emptyAt: -1}
	ch := &chunk{seg: seg, ptr: ptr, size: size, state: chunkFree}
	seg.first = ch
	l.segs[seg] = struct{}{}
	return ch
}

// take makes free chunk ch (in a tree, or new from addSegment) live with
// size bytes, splitting off the rest as a free chunk of the same binding.
// A live chunk is bound to nothing.
func (l *freeList) take(ch *chunk, size uint64) {
	l.remove(ch)
	ch.state = chunkLive // before the split, so the rest cannot merge back
	if rest := ch.size - size; rest > 0 {
		nc := l.newChunk()
		*nc = chunk{seg: ch.seg, ptr: ch.ptr + device.Ptr(size), size: rest,
			prev: ch, next: ch.next, binding: ch.binding}
		if ch.next != nil {
			ch.next.prev = nc
		}
		ch.next = nc
		ch.size = size
		l.insert(nc)
	}
	ch.bound = false
}

// remove takes ch out of its free tree (if it is in one).
func (l *freeList) remove(ch *chunk) {
	if ch.state != chunkFree {
		return
	}
	l.tree(ch.seg.small).Delete(ch)
	if ch.prev == nil && ch.next == nil {
		l.unmarkEmpty(ch.seg)
	}
}

// newChunk is a recycled chunk or a new one: splitting on every small
// allocation and merging on every free would otherwise cost a heap
// allocation each.
func (l *freeList) newChunk() *chunk {
	if n := len(l.spareChunks); n > 0 {
		ch := l.spareChunks[n-1]
		l.spareChunks = l.spareChunks[:n-1]
		return ch
	}
	return new(chunk)
}

// dropChunk keeps a chunk merged away for reuse, up to a bound.
func (l *freeList) dropChunk(ch *chunk) {
	if len(l.spareChunks) < 256 {
		*ch = chunk{}
		l.spareChunks = append(l.spareChunks, ch)
	}
}

// unmarkEmpty takes seg out of the empty list.
func (l *freeList) unmarkEmpty(seg *segment) {
	i := seg.emptyAt
	if i < 0 {
		return
	}
	last := len(l.empty) - 1
	l.empty[i] = l.empty[last]
	l.empty[i].emptyAt = i
	l.empty[last] = nil
	l.empty = l.empty[:last]
	seg.emptyAt = -1
}

// mergeable reports whether free neighbour n may join ch: both free and
// bound alike, so that the merged chunk's binding holds for all of it.
func mergeable(ch, n *chunk) bool {
	return n.state == chunkFree && n.bound == ch.bound && (!ch.bound || n.stream == ch.stream)
}

// insert puts ch (not in a tree) into its free tree, merged with free
// neighbours of the same binding.
func (l *freeList) insert(ch *chunk) {
	if p := ch.prev; p != nil && mergeable(ch, p) {
		l.remove(p)
		l.absorb(p, ch)
		ch = p
	}
	if n := ch.next; n != nil && mergeable(ch, n) {
		l.remove(n)
		l.absorb(ch, n)
	}
	ch.state = chunkFree
	l.tree(ch.seg.small).ReplaceOrInsert(ch)
	if ch.prev == nil && ch.next == nil {
		ch.seg.emptyAt = len(l.empty)
		l.empty = append(l.empty, ch.seg)
	}
}

// absorb merges chunk r into its left neighbour l. The merged chunk stays
// bound until the later of the two frees is done.
func (l *freeList) absorb(left, r *chunk) {
	left.size += r.size
	left.seq = max(left.seq, r.seq)
	left.next = r.next
	if r.next != nil {
		r.next.prev = left
	}
	l.dropChunk(r)
}

// unbind makes the free chunks bound to stream s and freed up to seq upto
// usable on any stream; it reports whether there were any.
func (l *freeList) unbind(s device.Stream, upto uint64) bool {
	var list []*chunk
	for _, t := range []*btree.BTreeG[*chunk]{l.small, l.large} {
		l.setPivot(true, s, 0)
		t.AscendGreaterOrEqual(&l.pivot, func(ch *chunk) bool {
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
		l.remove(ch)
		ch.bound = false
		l.insert(ch)
	}
	return len(list) > 0
}

// anyBound reports whether some free chunk is still bound to a stream.
func (l *freeList) anyBound() bool {
	for _, t := range []*btree.BTreeG[*chunk]{l.small, l.large} {
		if last, ok := t.Max(); ok && last.bound {
			return true
		}
	}
	return false
}

// releasable is the segments that are whole, free and unbound, largest
// first: the fewest driver calls for the bytes wanted.
func (l *freeList) releasable() []*segment {
	var segs []*segment
	for _, seg := range l.empty {
		if !seg.first.bound {
			segs = append(segs, seg)
		}
	}
	slices.SortFunc(segs, func(a, b *segment) int {
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
	return segs
}

// dropSegment forgets seg, one of releasable's, before it goes back to the
// source.
func (l *freeList) dropSegment(seg *segment) {
	l.remove(seg.first)
	delete(l.segs, seg)
}

// largest is the size of the largest free chunk.
func (l *freeList) largest() uint64 {
	var n uint64
	for _, t := range []*btree.BTreeG[*chunk]{l.small, l.large} {
		t.Ascend(func(ch *chunk) bool {
			n = max(n, ch.size)
			return true
		})
	}
	return n
}

// clear forgets every segment, once they have gone back to the source.
func (l *freeList) clear() {
	clear(l.segs)
	l.empty = nil
	l.small.Clear(false)
	l.large.Clear(false)
}
