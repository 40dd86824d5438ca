package pool

import (
	"slices"

	"github.com/gluaproject/glua/device"
)

// Segment is one allocation from the source as the pool has cut it up:
// its pieces tile it in address order. It is for pictures of where the
// memory is (glua's memory profile draws them), not for allocating.
type Segment struct {
	Ptr    device.Ptr
	Size   uint64
	Pieces []Piece
}

// Piece is part of a Segment: a live block's memory, or cached memory no
// block holds.
type Piece struct {
	Offset, Size uint64
	// Block is the live block holding the piece; nil for cached memory.
	Block *Block
}

// Segments lists what the pool holds from its source, in address order.
// The caching strategy's segments are cut into live and cached pieces;
// strategy "none" holds one segment per live block; strategy "cuda"'s
// cache is the driver's and not seen, so only its live blocks are listed,
// one segment each. Its cost is a walk of every piece, under the pool's
// lock: call it for a picture, not on every allocation.
func (p *Pool) Segments() []Segment {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	segs := p.a.segments()
	slices.SortFunc(segs, func(a, b Segment) int {
		switch {
		case a.Ptr < b.Ptr:
			return -1
		case a.Ptr > b.Ptr:
			return 1
		}
		return 0
	})
	return segs
}

// Reserved is Stats().Reserved without Stats' other work, cheap enough
// to read after every allocation; strategy "cuda"'s figure is as of its
// last reading of the driver's.
func (p *Pool) Reserved() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.c.reserved
}

// Segments is the shared pool's.
func (q *Quota) Segments() []Segment { return q.up.Segments() }

// Reserved is the shared pool's.
func (q *Quota) Reserved() uint64 { return q.up.Reserved() }

func (x *caching) segments() []Segment {
	out := make([]Segment, 0, len(x.list.segs))
	for seg := range x.list.segs {
		s := Segment{Ptr: seg.ptr, Size: seg.size}
		for ch := seg.first; ch != nil; ch = ch.next {
			piece := Piece{Offset: uint64(ch.ptr - seg.ptr), Size: ch.size}
			if ch.state == chunkLive {
				piece.Block = ch.block
			}
			s.Pieces = append(s.Pieces, piece)
		}
		out = append(out, s)
	}
	return out
}

// blockSegments is one whole segment per live block, for the strategies
// whose blocks are each an allocation of their own.
func blockSegments(live map[*Block]struct{}) []Segment {
	out := make([]Segment, 0, len(live))
	for b := range live {
		out = append(out, Segment{Ptr: b.Ptr, Size: b.rounded, Pieces: []Piece{{Size: b.rounded, Block: b}}})
	}
	return out
}

func (n *noneAlloc) segments() []Segment  { return blockSegments(n.live) }
func (a *asyncAlloc) segments() []Segment { return blockSegments(a.live) }
