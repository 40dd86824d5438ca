package runtime

import (
	"slices"

	"github.com/gluaproject/glua/internal/anonmem"
)

// HostRegisterer is implemented by backends that page-lock memory the
// caller owns, in place (the cuda backend, and the CPU backend as its
// stand-in): RegisterHost takes whole pages that stay mapped until
// UnregisterHost.
type HostRegisterer interface {
	RegisterHost(buf []byte) error
	UnregisterHost(buf []byte) error
}

// PinInPlace page-locks h's memory where it lies, for as long as h or a
// view of it can be reached, and returns a view of h that asynchronous
// copies accept, so that a host array read many times (batch.Matmul's B,
// once for each row of C's tiles) moves over the bus from where it is
// instead of through a pinned copy. Page-locking memory whose pages are
// there costs the driver about 40 ms a gigabyte, where a pinned copy
// costs a gigabyte of new pinned memory and a pass over the data. A
// later call on the same memory costs nothing.
//
// Only the new arrays of downloads (CopyToHost with no destination, from
// stagedMin bytes) can be: their memory is mapped by the runtime, in
// whole pages, and unlocked before it is reused or unmapped. For any
// other array, when [host] pinned_limit leaves no room, or when the
// backend cannot, PinInPlace returns h and false. An array that is pinned
// already is returned as it is, with true.
func (rt *Runtime) PinInPlace(h *HostArray) (*HostArray, bool) {
	if h == nil || len(h.data) == 0 {
		return h, false
	}
	if h.pinned {
		return h, true
	}
	owner, ok := h.owner.(*downloadPages)
	reg, canRegister := rt.backend.(HostRegisterer)
	ph, canPin := rt.backend.(PinnedHost)
	if !ok || !canRegister || !canPin || rt.usable() != nil {
		return h, false
	}
	rt.drain()
	d, m := &rt.xfer.downloads, owner.m
	d.mu.Lock()
	pinned := d.pinned[m]
	d.mu.Unlock()
	if !pinned {
		size := uint64(len(m.Bytes()))
		limit, err := rt.pinnedLimit()
		if err != nil || rt.xfer.makeRoom(ph, size, limit) != nil || reg.RegisterHost(m.Bytes()) != nil {
			return h, false
		}
		d.mu.Lock()
		if d.pinned == nil {
			d.pinned = map[*anonmem.Mapping]bool{}
		}
		d.pinned[m] = true
		d.mu.Unlock()
		rt.xfer.pinnedLive += size
	}
	return h.pinnedView(), true
}

// PinnedInPlace is PinInPlace for memory locked already: h's view that
// asynchronous copies accept when h is pinned or PinInPlace locked its
// memory and it still lives, else h and false. It locks nothing.
func (rt *Runtime) PinnedInPlace(h *HostArray) (*HostArray, bool) {
	if h == nil || len(h.data) == 0 {
		return h, false
	}
	if h.pinned {
		return h, true
	}
	owner, ok := h.owner.(*downloadPages)
	if !ok {
		return h, false
	}
	d := &rt.xfer.downloads
	d.mu.Lock()
	locked := d.pinned[owner.m]
	d.mu.Unlock()
	if !locked {
		return h, false
	}
	return h.pinnedView(), true
}

// pinnedView is a view of all of h that asynchronous copies accept.
func (h *HostArray) pinnedView() *HostArray {
	v := h.view(h.data, append([]int(nil), h.shape...))
	v.pinned = true
	return v
}

// unpinDownloads unlocks the memory PinInPlace locked whose arrays died,
// once no asynchronous copy can still use it, and hands it on to be
// reused or unmapped; at Close (all) it unlocks every such mapping, those
// of arrays still alive too, before the device goes.
func (rt *Runtime) unpinDownloads(all bool) []error {
	d := &rt.xfer.downloads
	d.mu.Lock()
	dead := d.unpin
	d.unpin = nil
	var live []*anonmem.Mapping
	if all {
		for m := range d.pinned {
			if !slices.Contains(dead, m) {
				live = append(live, m)
			}
		}
	}
	d.mu.Unlock()
	if len(dead)+len(live) == 0 {
		return nil
	}
	var errs []error
	if x := &rt.xfer; x.asyncCopies != x.asyncSynced {
		if err := rt.synchronize(); err != nil {
			// A copy may still use the memory: keep it locked and
			// mapped, and report why.
			return []error{err}
		}
		x.asyncSynced = x.asyncCopies
	}
	reg := rt.backend.(HostRegisterer)
	unlock := func(m *anonmem.Mapping) bool {
		if err := reg.UnregisterHost(m.Bytes()); err != nil {
			errs = append(errs, err)
			return false // still locked: unmapping it would leave the driver a stale range
		}
		d.mu.Lock()
		delete(d.pinned, m)
		d.mu.Unlock()
		rt.xfer.pinnedLive -= min(rt.xfer.pinnedLive, uint64(len(m.Bytes())))
		return true
	}
	for _, m := range dead {
		if unlock(m) {
			d.cacheOrUnmap(m)
		}
	}
	for _, m := range live {
		unlock(m)
	}
	return errs
}

// pinnedBytes is the memory of download arrays PinInPlace locked.
func (d *downloadMemory) pinnedBytes() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for m := range d.pinned {
		n += len(m.Bytes())
	}
	return uint64(n)
}

// hasUnpin reports whether arrays PinInPlace locked have died.
func (d *downloadMemory) hasUnpin() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.unpin) > 0
}
