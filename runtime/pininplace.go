package runtime

import (
	"errors"
	"os"
	"slices"
	"sync"
	"unsafe"

	"github.com/gluaproject/glua/internal/anonmem"
)

// HostRegisterer is implemented by backends that page-lock memory the
// caller owns, in place (the cuda backend, and the CPU backend as its
// stand-in): RegisterHost takes whole pages that stay mapped until
// UnregisterHost. Ranges registered apart that touch are copied to and
// from as one.
type HostRegisterer interface {
	RegisterHost(buf []byte) error
	UnregisterHost(buf []byte) error
}

// PinInPlace page-locks h's memory where it lies, for as long as h or a
// view of it can be reached, and returns a view of h that asynchronous
// copies accept, so that a host array read many times (batch.Matmul's B,
// once for each row of C's tiles) moves over the bus from where it is
// instead of through a pinned copy. Page-locking memory whose pages are
// there costs the driver tens of milliseconds a gigabyte, where a pinned
// copy costs a gigabyte of new pinned memory and a pass over the data. A
// later call on the same memory costs nothing.
//
// Only the new arrays of downloads (CopyToHost with no destination, from
// stagedMin bytes) can be: their memory is mapped by the runtime, in
// whole pages, and unlocked before it is reused or unmapped. For any
// other array, when [host] pinned_limit leaves no room, or when the
// backend cannot, PinInPlace returns h and false. An array that is pinned
// already is returned as it is, with true.
func (rt *Runtime) PinInPlace(h *HostArray) (*HostArray, bool) {
	v, ready, ok := rt.PinInPlaceAhead(h, 0)
	if !ok || v == h {
		return v, ok
	}
	if ready(len(h.data)) != nil {
		rt.unlockNow(h)
		return h, false
	}
	return v, true
}

// PinInPlaceAhead is PinInPlace that returns at once: the memory is
// locked from its start in pieces of piece bytes (a multiple of the page
// size; 0 or any other size: one piece), on a goroutine of its own, and
// ready(n) waits until the view's first n bytes are, or says why they
// could not be. A reader that goes through the array in order
// (batch.Matmul's first row of tiles) then waits only for the first
// piece. An asynchronous copy must lie inside one piece: the driver
// refuses a copy across two registrations, even where they touch.
//
// Each piece is locked when the reader first asks for it, not all of
// them at once: the driver holds back every other call of the process
// (launches, copies, allocations) while it page-locks, though the device
// goes on with the work queued before. On an H200's host, page-locking a
// gigabyte took 24-30 ms, in which a launch from another thread waited
// up to 8 ms; batch.Matmul's first call, whose set-up locked A and B
// whole while it waited to allocate, spent 44-79 ms setting up. A piece
// locked when asked for holds back only the reader, whose earlier calls
// keep the device busy meanwhile.
func (rt *Runtime) PinInPlaceAhead(h *HostArray, piece int) (*HostArray, func(n int) error, bool) {
	none := func(int) error { return nil }
	if h == nil || len(h.data) == 0 {
		return h, none, false
	}
	if h.pinned {
		return h, none, true
	}
	owner, ok := h.owner.(*downloadPages)
	reg, canRegister := rt.backend.(HostRegisterer)
	ph, canPin := rt.backend.(PinnedHost)
	if !ok || !canRegister || !canPin || rt.usable() != nil {
		return h, none, false
	}
	rt.drain()
	d, m := &rt.xfer.downloads, owner.m
	// h may be a view that starts past the mapping's start
	offset := int(uintptrOf(h.data) - uintptrOf(m.Bytes()))
	d.mu.Lock()
	st := d.pinned[m]
	d.mu.Unlock()
	if st == nil {
		size := uint64(len(m.Bytes()))
		limit, err := rt.pinnedLimit()
		if err != nil || rt.xfer.makeRoom(ph, size, limit) != nil {
			return h, none, false
		}
		if piece <= 0 || piece%os.Getpagesize() != 0 || offset%piece != 0 {
			piece = len(m.Bytes())
		}
		st = newInPlace(m.Bytes(), piece)
		d.mu.Lock()
		if d.pinned == nil {
			d.pinned = map[*anonmem.Mapping]*inPlace{}
		}
		d.pinned[m] = st
		d.mu.Unlock()
		rt.xfer.pinnedLive += size
		go st.lock(reg)
	} else if !st.fits(piece, offset) {
		return h, none, false // locked in other pieces: a copy could cross them
	}
	return h.pinnedView(), func(n int) error { return st.ready(offset + n) }, true
}

// PinnedInPlace is PinInPlaceAhead for memory locked already, in one
// piece or in pieces that copies of piece bytes from multiples of piece
// (counted from h's start) cannot cross: h's view that asynchronous copies accept (once the
// locking under way, if any, is over), else h and false. It locks
// nothing.
func (rt *Runtime) PinnedInPlace(h *HostArray, piece int) (*HostArray, bool) {
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
	st := d.pinned[owner.m]
	d.mu.Unlock()
	offset := int(uintptrOf(h.data) - uintptrOf(owner.m.Bytes()))
	if st == nil || !st.fits(piece, offset) || st.ready(len(owner.m.Bytes())) != nil {
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

// inPlace is the page-locking of one mapping, piece after piece from its
// start on a goroutine (lock), each once a reader has asked for it
// (wanted); locked[i] is closed once piece i is locked (ok[i]) or the
// locking stopped before it, and done once lock returns. ok[i] and err
// are written before the channel that publishes them closes, and not
// again; n is read once done is closed.
type inPlace struct {
	piece  int // the pieces' size, but the last's
	pieces [][]byte
	locked []chan struct{}
	ok     []bool
	done   chan struct{}
	n      int   // pieces locked, from the first
	err    error // why the next one was not

	mu     sync.Mutex
	more   sync.Cond // wanted grew, or stop was set
	wanted int       // pieces asked for, from the first
	stop   bool      // unlock: lock no more
}

// errUnlocked is why a piece was not locked: its array died first.
var errUnlocked = errors.New("the array was unlocked before this piece was locked")

func newInPlace(mem []byte, piece int) *inPlace {
	st := &inPlace{piece: piece, done: make(chan struct{})}
	st.more.L = &st.mu
	for off := 0; off < len(mem); {
		end := min(off+piece, len(mem))
		if len(mem)-end < piece/2 { // no small last piece: one more call for little
			end = len(mem)
		}
		st.pieces = append(st.pieces, mem[off:end:end])
		st.locked = append(st.locked, make(chan struct{}))
		off = end
	}
	st.ok = make([]bool, len(st.pieces))
	return st
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// fits says whether copies of piece bytes (0: of any size, from
// anywhere) starting at multiples of piece past offset bytes into the
// mapping lie inside one piece.
func (st *inPlace) fits(piece, offset int) bool {
	return len(st.pieces) == 1 || piece > 0 && st.piece%piece == 0 && offset%piece == 0
}

func (st *inPlace) lock(reg HostRegisterer) {
	defer close(st.done)
	for i, p := range st.pieces {
		st.mu.Lock()
		for i >= st.wanted && !st.stop {
			st.more.Wait()
		}
		stop := st.stop
		st.mu.Unlock()
		if st.err == nil && stop {
			st.err = errUnlocked
		}
		if st.err == nil {
			if st.err = reg.RegisterHost(p); st.err == nil {
				st.n++
				st.ok[i] = true
			}
		}
		close(st.locked[i])
	}
}

// want lets the goroutine lock the first n pieces.
func (st *inPlace) want(n int) {
	st.mu.Lock()
	if n > st.wanted {
		st.wanted = n
		st.more.Broadcast()
	}
	st.mu.Unlock()
}

// ready waits until the mapping's first n bytes are locked.
func (st *inPlace) ready(n int) error {
	if n <= 0 {
		return nil
	}
	end := 0
	for i, p := range st.pieces {
		end += len(p)
		if end >= n || i == len(st.pieces)-1 {
			st.want(i + 1)
			<-st.locked[i]
			if !st.ok[i] {
				return errors.Join(errors.New("page-locking in place"), st.err)
			}
			return nil
		}
	}
	return nil
}

// unlock stops the locking, waits for the piece under way, and unlocks
// what was locked; an error leaves the rest locked (unmapping it then
// would leave the driver a stale range).
func (st *inPlace) unlock(reg HostRegisterer) error {
	st.mu.Lock()
	st.stop = true
	st.more.Broadcast()
	st.mu.Unlock()
	<-st.done
	for st.n > 0 {
		if err := reg.UnregisterHost(st.pieces[st.n-1]); err != nil {
			return err
		}
		st.n--
	}
	return nil
}

// unlockNow undoes PinInPlaceAhead for h's memory at once, h being alive:
// PinInPlace's way out when the locking failed.
func (rt *Runtime) unlockNow(h *HostArray) {
	m := h.owner.(*downloadPages).m
	d := &rt.xfer.downloads
	d.mu.Lock()
	st := d.pinned[m]
	d.mu.Unlock()
	if st != nil && st.unlock(rt.backend.(HostRegisterer)) == nil {
		d.mu.Lock()
		delete(d.pinned, m)
		d.mu.Unlock()
		rt.xfer.pinnedLive -= min(rt.xfer.pinnedLive, uint64(len(m.Bytes())))
	}
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
		d.mu.Lock()
		st := d.pinned[m]
		d.mu.Unlock()
		if err := st.unlock(reg); err != nil {
			errs = append(errs, err)
			return false
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
