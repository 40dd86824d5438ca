package pool

import (
	"fmt"
	"slices"
	"sort"

	"github.com/gluaproject/glua/device"
	"github.com/google/btree"
)

// checkInvariants verifies the pool's internal bookkeeping: for the caching
// strategy, that chunks tile their segments, that free chunks are in the
// right tree and fully merged, and that the counts agree with the chunks.
func checkInvariants(p *Pool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	var liveBytes, liveReq uint64
	var liveN int
	var reserved uint64
	switch a := p.a.(type) {
	case *caching:
		free := map[*chunk]bool{}
		for _, t := range []*btree.BTreeG[*chunk]{a.small, a.large} {
			var err error
			t.Ascend(func(ch *chunk) bool {
				if ch.state != chunkFree {
					err = fmt.Errorf("chunk %#x in a tree in state %d", ch.ptr, ch.state)
				}
				if (t == a.small) != ch.seg.small {
					err = fmt.Errorf("chunk %#x in the wrong tree", ch.ptr)
				}
				free[ch] = true
				return err == nil
			})
			if err != nil {
				return err
			}
		}
		seenFree, cached := 0, 0
		for seg := range a.segs {
			reserved += seg.size
			if seg.first.prev != nil || seg.first.ptr != seg.ptr {
				return fmt.Errorf("segment %#x: first chunk at %#x", seg.ptr, seg.first.ptr)
			}
			var sum uint64
			for ch := seg.first; ch != nil; ch = ch.next {
				if ch.seg != seg || ch.ptr != seg.ptr+device.Ptr(sum) || ch.size == 0 || ch.size%granularity != 0 && ch.size != seg.size {
					return fmt.Errorf("segment %#x: chunk %#x+%d does not tile it", seg.ptr, ch.ptr, ch.size)
				}
				if ch.next != nil && ch.next.prev != ch {
					return fmt.Errorf("segment %#x: broken links at %#x", seg.ptr, ch.ptr)
				}
				sum += ch.size
				switch ch.state {
				case chunkLive:
					if ch.block == nil || ch.block.ch != ch || ch.block.Ptr != ch.ptr || ch.block.rounded != ch.size || ch.block.freed {
						return fmt.Errorf("live chunk %#x and its block disagree", ch.ptr)
					}
					liveBytes += ch.size
					liveReq += ch.block.Size
					liveN++
				case chunkCached:
					if !slices.Contains(a.recent, ch) {
						return fmt.Errorf("cached chunk %#x is not in recent", ch.ptr)
					}
					cached++
				case chunkFree:
					if !free[ch] {
						return fmt.Errorf("free chunk %#x is not in a tree", ch.ptr)
					}
					seenFree++
					if ch.next != nil && mergeable(ch, ch.next) {
						return fmt.Errorf("free chunks %#x and %#x were not merged", ch.ptr, ch.next.ptr)
					}
				}
			}
			inEmpty := seg.emptyAt >= 0 && seg.emptyAt < len(a.empty) && a.empty[seg.emptyAt] == seg
			if whole := seg.first.next == nil && seg.first.state == chunkFree; whole != inEmpty || !inEmpty && seg.emptyAt != -1 {
				return fmt.Errorf("segment %#x: whole-free %v but in the empty list %v (index %d)", seg.ptr, whole, inEmpty, seg.emptyAt)
			}
			if sum != seg.size {
				return fmt.Errorf("segment %#x: chunks cover %d of %d bytes", seg.ptr, sum, seg.size)
			}
		}
		if seenFree != len(free) {
			return fmt.Errorf("%d chunks in the trees, %d free chunks in segments", len(free), seenFree)
		}
		if cached != len(a.recent) || len(a.recent) > recentMax {
			return fmt.Errorf("%d chunks in recent, %d cached chunks in segments", len(a.recent), cached)
		}
		for _, seg := range a.empty {
			if _, ok := a.segs[seg]; !ok {
				return fmt.Errorf("empty set holds released segment %#x", seg.ptr)
			}
		}
	case *noneAlloc:
		for b := range a.live {
			liveBytes += b.rounded
			liveReq += b.Size
			liveN++
			reserved += b.rounded
		}
	default:
		return nil
	}
	if reserved != p.c.reserved {
		return fmt.Errorf("segments hold %d bytes, reserved says %d", reserved, p.c.reserved)
	}
	zero := p.acct.live - liveN // blocks of size 0 hold no chunk
	if liveBytes != p.acct.used || liveReq != p.acct.requested || zero < 0 {
		return fmt.Errorf("live chunks: %d bytes (%d asked) in %d blocks; accounting: %d (%d) in %d",
			liveBytes, liveReq, liveN, p.acct.used, p.acct.requested, p.acct.live)
	}
	return nil
}

// liveOverlap reports two blocks whose memory overlaps.
func liveOverlap(blocks []*Block) error {
	bs := make([]*Block, 0, len(blocks))
	for _, b := range blocks {
		if b.Size > 0 {
			bs = append(bs, b)
		}
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].Ptr < bs[j].Ptr })
	for i := 1; i < len(bs); i++ {
		if uint64(bs[i-1].Ptr)+bs[i-1].Size > uint64(bs[i].Ptr) {
			return fmt.Errorf("blocks at %#x (%d bytes) and %#x overlap", bs[i-1].Ptr, bs[i-1].Size, bs[i].Ptr)
		}
	}
	return nil
}
