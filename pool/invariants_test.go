package pool

import (
	"fmt"
	"slices"
	"sort"
)

// checkInvariants verifies the pool's internal bookkeeping: for the caching
// strategy, the free list's and the stream order's own invariants, and
// that live chunks, recent and the counts agree.
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
		fig, err := checkFreeList(a.list)
		if err != nil {
			return err
		}
		if err := checkStreamOrder(a.order, fig.chunks); err != nil {
			return err
		}
		reserved = fig.reserved
		cached := 0
		for seg := range a.list.segs {
			for ch := seg.first; ch != nil; ch = ch.next {
				switch ch.state {
				case chunkLive:
					if ch.block == nil || ch.block.ch != ch || ch.block.Ptr != ch.ptr || ch.block.rounded != ch.size || ch.block.freed {
						return fmt.Errorf("live chunk %#x and its block disagree", ch.ptr)
					}
					if ch.bound {
						return fmt.Errorf("live chunk %#x is bound to stream %d", ch.ptr, ch.stream)
					}
					liveBytes += ch.size
					liveReq += ch.block.Size
					liveN++
				case chunkCached:
					if !slices.Contains(a.order.recent, ch) {
						return fmt.Errorf("cached chunk %#x is not in recent", ch.ptr)
					}
					cached++
				}
			}
		}
		if cached != len(a.order.recent) || len(a.order.recent) > recentMax {
			return fmt.Errorf("%d chunks in recent, %d cached chunks in segments", len(a.order.recent), cached)
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
