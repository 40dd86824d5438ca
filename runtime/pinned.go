package runtime

import (
	goruntime "runtime"
	"unsafe"
)

// PinnedHost is implemented by backends that can page-lock host memory, so
// that transfers run at the bus's full speed by DMA instead of through a
// staging copy (the cuda backend).
type PinnedHost interface {
	AllocHost(nbytes uint64) ([]byte, error)
	FreeHost(buf []byte) error
}

// pinnedMem is one page-locked allocation, shared by a host array and its
// views. When none of them can be reached any more, a cleanup queues the
// memory, and the runtime's goroutine returns it to the driver.
type pinnedMem struct{ _ byte }

// newPinned page-locks nbytes for a host array, or returns nil, false when
// the backend has no pinned memory (the CPU backend).
func (rt *Runtime) newPinned(nbytes uint64) ([]byte, *pinnedMem, bool, error) {
	ph, ok := rt.backend.(PinnedHost)
	if !ok || nbytes == 0 {
		return nil, nil, false, nil
	}
	rt.drain()
	buf, err := ph.AllocHost(nbytes)
	if err != nil {
		return nil, nil, false, err
	}
	clear(buf) // host arrays start zeroed, pinned or not
	owner := &pinnedMem{}
	base := unsafe.SliceData(buf)
	rt.mu.Lock()
	rt.pinned[base] = buf
	rt.mu.Unlock()
	goruntime.AddCleanup(owner, func(base *byte) { rt.unreachablePinned(base) }, base)
	return buf, owner, true, nil
}

func (rt *Runtime) unreachablePinned(base *byte) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if buf, ok := rt.pinned[base]; ok && !rt.closed.Load() {
		delete(rt.pinned, base)
		rt.pendingHost = append(rt.pendingHost, buf)
		rt.queued.Store(true)
	}
}

// freePinned returns queued and (at Close) remaining pinned memory.
func (rt *Runtime) freePinned(all bool) []error {
	ph, ok := rt.backend.(PinnedHost)
	if !ok {
		return nil
	}
	rt.mu.Lock()
	bufs := rt.pendingHost
	rt.pendingHost = nil
	if all {
		for base, buf := range rt.pinned {
			bufs = append(bufs, buf)
			delete(rt.pinned, base)
		}
	}
	rt.mu.Unlock()
	var errs []error
	for _, b := range bufs {
		if err := ph.FreeHost(b); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
