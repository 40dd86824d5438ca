package pool

import (
	"fmt"

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
