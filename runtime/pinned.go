package runtime

import (
	"fmt"
	goruntime "runtime"
	"unsafe"
)

// PinnedHost is implemented by backends that can page-lock host memory, so
// that transfers run at the bus's full speed by DMA instead of through a
// staging copy (the cuda backend). AllocHost's memory starts zeroed.
type PinnedHost interface {
	AllocHost(nbytes uint64) ([]byte, error)
	FreeHost(buf []byte) error
}

// pinnedMem is one page-locked allocation, shared by a host array and its
// views. When none of them can be reached any more, a cleanup queues the
// memory, and the runtime's goroutine keeps it for reuse. id tells this
// allocation from a later one that reuses the same buffer: the cleanup of
// an owner released early (ReleasePinned) may run after the buffer has
// been handed out again, and must then leave it alone. It is 16 bytes:
// Go packs smaller pointer-free objects together into one block, and a
// cleanup then waits for every neighbour in the block to die too.
type pinnedMem struct {
	id uint64
	_  uint64
}

// livePinned is a buffer held by a pinnedMem.
type livePinned struct {
	buf []byte
	id  uint64
}

// Page-locking costs time (the driver pins every page: 0.06-0.07 s a
// gigabyte on the H100's host, 0.6 s through cuMemHostAlloc), so
// freed pinned memory is cached for the next request of its size class,
// as PyTorch's pinned-memory allocator does, under [host] pinned_limit:
// live and cached together never pass it, and the cache gives way first.
// Sizes round up to a power of two below pinnedLarge and to multiples of
// it above, so that a loop's repeated requests find what it freed.
const (
	pinnedSmallest = 4 << 10
	pinnedLarge    = 2 << 20
)

func pinnedClass(n uint64) uint64 {
	if n >= pinnedLarge {
		return (n + pinnedLarge - 1) / pinnedLarge * pinnedLarge
	}
	c := uint64(pinnedSmallest)
	for c < n {
		c *= 2
	}
	return c
}

// newPinned page-locks nbytes for a host array, reusing a cached buffer of
// its class when there is one, or returns nil, false when the backend has
// no pinned memory (the CPU backend).
func (rt *Runtime) newPinned(nbytes uint64, zero bool) ([]byte, *pinnedMem, bool, error) {
	ph, ok := rt.backend.(PinnedHost)
	if !ok || nbytes == 0 {
		return nil, nil, false, nil
	}
	rt.drain()
	class := pinnedClass(nbytes)
	buf, reused, err := rt.takePinned(ph, class)
	if err != nil {
		return nil, nil, false, err
	}
	buf = buf[:nbytes]
	if zero && reused {
		clear(buf) // host arrays start zeroed, pinned or not; AllocHost's are
	}
	rt.xfer.pinnedIDs++
	owner := &pinnedMem{id: rt.xfer.pinnedIDs}
	base := unsafe.SliceData(buf)
	rt.mu.Lock()
	rt.xfer.pinned[base] = livePinned{buf[:class], owner.id}
	rt.mu.Unlock()
	rt.xfer.pinnedLive += class
	id := owner.id
	goruntime.AddCleanup(owner, func(base *byte) { rt.unreachablePinned(base, id) }, base)
	return buf, owner, true, nil
}

// takePinned is a buffer of class bytes: a cached one (reused), or a new
// one once the limit allows it (releasing cached ones first).
func (rt *Runtime) takePinned(ph PinnedHost, class uint64) (buf []byte, reused bool, err error) {
	x := &rt.xfer
	if buf, ok := x.reuse(class); ok {
		// An asynchronous copy may still read or write a freed buffer:
		// none can once the device has caught up.
		if x.asyncCopies != x.asyncSynced {
			if err := rt.synchronize(); err != nil {
				return nil, false, err
			}
			x.asyncSynced = x.asyncCopies
		}
		return buf, true, nil
	}
	limit, err := rt.pinnedLimit()
	if err != nil {
		return nil, false, err
	}
	if err := x.makeRoom(ph, class, limit); err != nil {
		return nil, false, err
	}
	buf, err = ph.AllocHost(class)
	return buf, false, err
}

// pinnedLimit is [host] pinned_limit in bytes, read once.
func (rt *Runtime) pinnedLimit() (uint64, error) {
	x := &rt.xfer
	if !x.pinnedLimitRead {
		n, err := rt.cfg.PinnedLimit()
		if err != nil {
			return 0, fmt.Errorf("pinned limit: %w", err)
		}
		x.pinnedLimitBytes, x.pinnedLimitRead = n, true
	}
	return x.pinnedLimitBytes, nil
}

func (rt *Runtime) unreachablePinned(base *byte, id uint64) {
	if !rt.closed.Load() {
		rt.queuePinned(base, id)
	}
}

// queuePinned moves the live buffer starting at base, if allocation id
// still holds it, to the queue drain caches from.
func (rt *Runtime) queuePinned(base *byte, id uint64) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	ok := rt.xfer.unpin(base, id)
	if ok {
		rt.mem.wake()
	}
	return ok
}

// freePinned caches the pinned buffers found unreachable; at Close (all)
// it returns every buffer, live, queued or cached, to the driver.
func (rt *Runtime) freePinned(all bool) []error {
	ph, ok := rt.backend.(PinnedHost)
	if !ok {
		return nil
	}
	rt.mu.Lock()
	bufs := rt.xfer.takeHost(all)
	rt.mu.Unlock()
	rt.xfer.cache(bufs)
	if all {
		return rt.xfer.release(ph, 0)
	}
	if limit, err := rt.pinnedLimit(); err == nil && limit > 0 {
		return rt.xfer.release(ph, limit)
	}
	return nil
}

// PinnedStats are the page-locked host memory this runtime holds in live
// host arrays and staging, what it keeps cached for reuse, and [host]
// pinned_limit (0: none).
func (rt *Runtime) PinnedStats() (live, cached, limit uint64) {
	limit, _ = rt.pinnedLimit()
	return rt.xfer.pinnedLive, rt.xfer.pinnedCached, limit
}

// ReleasePinned gives h's page-locked memory back to the cache now rather
// than when Go's collector finds h unreachable: a loop that gets staging
// buffers on every call (batch.Matmul) then reuses them instead of
// page-locking anew. h, and every view of it, must not be used afterwards;
// an asynchronous copy still reading or writing it is waited for before
// the cache hands it out again (takePinned). An array that is not
// page-locked memory of this runtime is left alone.
func (rt *Runtime) ReleasePinned(h *HostArray) {
	owner, ok := h.owner.(*pinnedMem)
	if !ok || len(h.data) == 0 {
		return
	}
	queued := rt.queuePinned(unsafe.SliceData(h.data), owner.id)
	h.data = nil
	if queued {
		rt.drain()
	}
}
