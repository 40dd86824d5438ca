package pool

import (
	"fmt"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/google/btree"
)

// freeListFigures is what checkFreeList counts.
type freeListFigures struct {
	reserved uint64   // bytes in segments
	free     uint64   // bytes in free chunks
	taken    uint64   // bytes in the other chunks: live, cached, waiting, held
	chunks   []*chunk // the free chunks, in tree order
}

// checkFreeList verifies the free list's own invariants: chunks tile their
// segments; a free chunk is in the right tree and merged with its free
// neighbours of the same binding; the empty list holds exactly the
// segments that are one free chunk.
func checkFreeList(l *freeList) (freeListFigures, error) {
	var fig freeListFigures
	free := map[*chunk]bool{}
	for _, t := range []*btree.BTreeG[*chunk]{l.small, l.large} {
		var err error
		t.Ascend(func(ch *chunk) bool {
			if ch.state != chunkFree {
				err = fmt.Errorf("chunk %#x in a tree in state %d", ch.ptr, ch.state)
			}
			if (t == l.small) != ch.seg.small {
				err = fmt.Errorf("chunk %#x in the wrong tree", ch.ptr)
			}
			free[ch] = true
			fig.chunks = append(fig.chunks, ch)
			return err == nil
		})
		if err != nil {
			return fig, err
		}
	}
	seenFree := 0
	for seg := range l.segs {
		fig.reserved += seg.size
		if seg.first.prev != nil || seg.first.ptr != seg.ptr {
			return fig, fmt.Errorf("segment %#x: first chunk at %#x", seg.ptr, seg.first.ptr)
		}
		var sum uint64
		for ch := seg.first; ch != nil; ch = ch.next {
			if ch.seg != seg || ch.ptr != seg.ptr+device.Ptr(sum) || ch.size == 0 || ch.size%granularity != 0 && ch.size != seg.size {
				return fig, fmt.Errorf("segment %#x: chunk %#x+%d does not tile it", seg.ptr, ch.ptr, ch.size)
			}
			if ch.next != nil && ch.next.prev != ch {
				return fig, fmt.Errorf("segment %#x: broken links at %#x", seg.ptr, ch.ptr)
			}
			sum += ch.size
			if ch.state != chunkFree {
				fig.taken += ch.size
				continue
			}
			if !free[ch] {
				return fig, fmt.Errorf("free chunk %#x is not in a tree", ch.ptr)
			}
			seenFree++
			fig.free += ch.size
			if ch.next != nil && mergeable(ch, ch.next) {
				return fig, fmt.Errorf("free chunks %#x and %#x were not merged", ch.ptr, ch.next.ptr)
			}
		}
		inEmpty := seg.emptyAt >= 0 && seg.emptyAt < len(l.empty) && l.empty[seg.emptyAt] == seg
		if whole := seg.first.next == nil && seg.first.state == chunkFree; whole != inEmpty || !inEmpty && seg.emptyAt != -1 {
			return fig, fmt.Errorf("segment %#x: whole-free %v but in the empty list %v (index %d)", seg.ptr, whole, inEmpty, seg.emptyAt)
		}
		if sum != seg.size {
			return fig, fmt.Errorf("segment %#x: chunks cover %d of %d bytes", seg.ptr, sum, seg.size)
		}
	}
	if seenFree != len(free) {
		return fig, fmt.Errorf("%d chunks in the trees, %d free chunks in segments", len(free), seenFree)
	}
	for _, seg := range l.empty {
		if _, ok := l.segs[seg]; !ok {
			return fig, fmt.Errorf("empty set holds released segment %#x", seg.ptr)
		}
	}
	return fig, nil
}

// FuzzFreeList drives the free list alone (no pool, no source, no streams
// but the bindings it is given) through takes, frees under random
// bindings, unbinding and segment releases, and checks after every step
// that best fit found the smallest usable chunk, that no two taken chunks
// overlap, that free and taken bytes add up to the segments, and
// checkFreeList's invariants.
func FuzzFreeList(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0, 1, 1, 0, 1, 3, 0, 1, 0, 2, 9, 1, 4, 0, 5, 1, 255, 6})
	f.Add([]byte{0, 0, 9, 0, 1, 0, 0, 0, 20, 0, 2, 1, 0, 3, 1, 3, 0, 2, 4, 1, 5, 2, 200, 6, 0, 1, 0, 0, 1, 0})
	f.Add([]byte{1, 2, 0, 3, 1, 1, 4, 0, 0, 9, 1, 0, 3, 0, 1, 3, 0, 2, 3, 1, 3, 5, 0, 255, 5, 1, 255, 6})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{data: data}
		l := newFreeList()
		var taken []*chunk
		next := device.Ptr(1 << 40)
		var seq uint64
		for step := 0; r.more() && step < 400; step++ {
			switch op := r.byte() % 7; op {
			case 0, 1, 2:
				size := roundUp(max(r.size(), 1), granularity)
				small, s, own := size <= smallMax, device.Stream(r.byte()%fuzzStreams), r.byte()%2 == 0
				want := smallestUsable(l, size, small, s, own)
				ch := l.bestFit(size, small, s, own)
				if ch == nil && want != 0 || ch != nil && (ch.size != want || !ch.usableBy(s) || ch.bound && !own || ch.seg.small != small) {
					t.Fatalf("step %d: bestFit(%d, small %v, stream %d, own %v) = %+v; the smallest usable is %d bytes", step, size, small, s, own, ch, want)
				}
				if ch == nil {
					segSize := size
					if small {
						segSize = smallSegment
					} else if r.byte()%2 == 0 {
						segSize += uint64(r.byte()) * granularity
					}
					ch = l.addSegment(next, segSize, small)
					next += device.Ptr(segSize) + granularity
				}
				l.take(ch, size)
				taken = append(taken, ch)
			case 3, 4:
				if len(taken) == 0 {
					break
				}
				i := int(r.byte()) % len(taken)
				ch := taken[i]
				taken = append(taken[:i], taken[i+1:]...)
				if s := r.byte() % (fuzzStreams + 1); s > 0 {
					seq++
					ch.binding = binding{bound: true, stream: device.Stream(s - 1), seq: seq}
				}
				l.insert(ch)
			case 5:
				s, upto := device.Stream(r.byte()%fuzzStreams), uint64(r.byte())*seq/255
				l.unbind(s, upto)
				l.ascend(func(ch *chunk) {
					if ch.bound && ch.stream == s && ch.seq <= upto {
						t.Fatalf("step %d: chunk %#x bound to stream %d, freed at %d, outlived unbind up to %d", step, ch.ptr, s, ch.seq, upto)
					}
				})
			case 6:
				segs := l.releasable()
				for i, seg := range segs {
					if ch := seg.first; ch.next != nil || ch.state != chunkFree || ch.bound || i > 0 && segs[i-1].size < seg.size {
						t.Fatalf("step %d: releasable segment %#x (%d bytes) is not whole, free, unbound and in size order", step, seg.ptr, seg.size)
					}
				}
				for _, seg := range segs[:int(r.byte())%(len(segs)+1)] {
					l.dropSegment(seg)
				}
			}
			fig, err := checkFreeList(l)
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			var held uint64
			blocks := make([]*Block, len(taken))
			for i, ch := range taken {
				held += ch.size
				blocks[i] = &Block{Ptr: ch.ptr, Size: ch.size}
			}
			if err := liveOverlap(blocks); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			if fig.taken != held || fig.free+fig.taken != fig.reserved {
				t.Fatalf("step %d: %d bytes free and %d taken (%d by the test) in %d bytes of segments", step, fig.free, fig.taken, held, fig.reserved)
			}
		}
	})
}

// smallestUsable is, by brute force, the size of the chunk bestFit should
// find (0: none).
func smallestUsable(l *freeList, size uint64, small bool, s device.Stream, own bool) uint64 {
	var best uint64
	l.tree(small).Ascend(func(ch *chunk) bool {
		if ch.size >= size && (!ch.bound || own && ch.stream == s) && (best == 0 || ch.size < best) {
			best = ch.size
		}
		return true
	})
	return best
}

// ascend calls f for every free chunk.
func (l *freeList) ascend(f func(*chunk)) {
	for _, t := range []*btree.BTreeG[*chunk]{l.small, l.large} {
		t.Ascend(func(ch *chunk) bool { f(ch); return true })
	}
}
