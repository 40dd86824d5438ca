package pool

import (
	"errors"
	"math"
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

// caching is strategy "caching": a free list of segments drawn from the
// source (freelist.go), under the stream order (streamorder.go), through
// which freed memory passes on its way back to the free list, and which
// says which stream may reuse it and when.
type caching struct {
	c     *core
	list  *freeList
	order *streamOrder
	// shareMid draws mid-size requests from shared largeSegment segments
	// instead of their own; the tests and benchmarks compare the two.
	shareMid bool
}

func newCaching(c *core) *caching {
	list := newFreeList()
	return &caching{c: c, list: list, order: newStreamOrder(c.events, c.syncer, list)}
}

func (x *caching) round(nbytes uint64) (uint64, bool) {
	if nbytes > math.MaxUint64-largeRound {
		return 0, false
	}
	return roundUp(nbytes, granularity), true
}

func (x *caching) alloc(b *Block) (bool, error) {
	if ch := x.order.reuse(b.rounded, b.Stream); ch != nil {
		lend(ch, b)
		return true, nil
	}
	x.order.flush()
	small, async := b.rounded <= smallMax, x.order.async()
	ch := x.list.bestFit(b.rounded, small, b.Stream, async)
	if ch == nil && async {
		// Memory other streams freed may be done with by now.
		x.order.coverAll(b.Stream, true)
		if x.order.poll() {
			ch = x.list.bestFit(b.rounded, small, b.Stream, true)
		}
	}
	hit := ch != nil
	if !hit {
		var err error
		if ch, err = x.grow(b.rounded); err != nil {
			return false, err
		}
	}
	x.list.take(ch, b.rounded)
	lend(ch, b)
	return hit, nil
}

// lend gives live chunk ch to b.
func lend(ch *chunk, b *Block) {
	ch.block = b
	b.ch, b.Ptr = ch, ch.ptr
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
	return x.list.addSegment(ptr, want, size <= smallMax), nil
}

func (x *caching) free(b *Block) error {
	ch := b.ch
	b.ch = nil
	ch.block = nil
	return x.order.freed(ch, b.Stream, b.uses)
}

func (x *caching) release(nbytes uint64, thorough bool) (uint64, error) {
	x.order.flush()
	var settleErr error
	if thorough {
		settleErr = x.order.settle()
	} else {
		// Only segments bound to a stream, and free, are worth an event.
		for _, seg := range x.list.empty {
			if ch := seg.first; ch.bound {
				x.order.coverStream(ch.stream)
			}
		}
		x.order.poll()
	}
	var released uint64
	var errs []error
	for _, seg := range x.list.releasable() {
		if nbytes > 0 && released >= nbytes {
			break
		}
		x.list.dropSegment(seg)
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

func (x *caching) synchronized() { x.order.synchronized() }

func (x *caching) limitsChanged(soft, hard uint64) error { return nil }

func (x *caching) describe(st *Stats) {
	x.order.flush()
	st.Segments = len(x.list.segs)
	st.LargestFreeBlock = max(st.LargestFreeBlock, x.list.largest())
}

func (x *caching) close() error {
	var errs []error
	if err := x.order.wait(); err != nil {
		errs = append(errs, err)
	}
	for seg := range x.list.segs {
		for ch := seg.first; ch != nil; ch = ch.next {
			if ch.block != nil {
				ch.block.freed = true
				ch.block.ch = nil
			}
		}
		if err := x.c.sourceFree(seg.ptr, seg.size); err != nil {
			errs = append(errs, err)
		}
	}
	if err := x.order.close(); err != nil {
		errs = append(errs, err)
	}
	x.list.clear()
	return errors.Join(errs...)
}
