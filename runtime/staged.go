package runtime

import (
	"errors"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/prefault"
	"github.com/gluaproject/glua/npy"
)

// The runtime's own synchronous copies between pageable memory and the
// device, through a Stager borrowed for the one copy.

// stagedMin is the size from which a synchronous copy to or from pageable
// memory goes through a Stager: the driver's own copies from and to
// pageable memory run at about 10 and 15 GB/s on the H100's host, a fifth
// and a quarter of the bus.
const stagedMin = 4 << 20

// stagedUpload copies data to a through a Stager on the runtime's stream
// and waits for the copies, when the backend has pinned memory and
// asynchronous copies and there is pinned memory to stage through; ok is
// false when it did not try, and the caller copies some other way.
func (rt *Runtime) stagedUpload(a *Array, data []byte) (ok bool, err error) {
	return rt.staged(len(data), func(st *Stager, ac AsyncCopier) error {
		u := &Staged{st: st, data: data, dst: a.ptr(), handle: rt.streams.own, ac: ac}
		if err := st.queue(u, false); err != nil {
			return err
		}
		return u.Wait()
	})
}

// stagedDownload is stagedUpload's other direction: the bus writes pieces
// of src into pinned slots and threads copy each out into data once its
// copy has ended. The driver's own copy into pageable memory runs at
// about 15 GB/s on the H100's host, under a third of the bus. fresh says
// that data's pages may not be there yet (a new download array's).
func (rt *Runtime) stagedDownload(data []byte, src device.Ptr, fresh bool) (ok bool, err error) {
	return rt.staged(len(data), func(st *Stager, ac AsyncCopier) error {
		return st.copyOut(ac, rt.streams.own, data, src, fresh)
	})
}

// staged runs copy with a Stager for n bytes, or reports that it cannot.
func (rt *Runtime) staged(n int, copy func(*Stager, AsyncCopier) error) (ok bool, err error) {
	ac, async := rt.backend.(AsyncCopier)
	if _, pinned := rt.backend.(PinnedHost); !async || !pinned || n < stagedMin {
		return false, nil
	}
	st := rt.NewStager(nil)
	st.paired = false // one upload alone never pairs: its slots stay a piece
	if _, err := st.prepare(n); err != nil {
		st.Close()
		return false, nil // no pinned memory to spare under [host] pinned_limit
	}
	err = copy(st, ac)
	// Close waits for the copies, as a synchronous copy must, and puts
	// the slots in the runtime's pinned cache for the next one.
	return true, errors.Join(err, st.Close())
}

// copyOut copies the bytes at base into data through the slots: each
// thread keeps a piece in flight on the bus in one slot while it copies
// the piece before out of the other. Into fresh memory, a thread also
// asks the kernel for each piece's pages while the bus fills its slot,
// so that faults, and the zeroing of the pages they bring, are paid
// beside the transfer rather than after it, in the copy out; where the
// pages are there already, the request costs a walk of their entries.
func (st *Stager) copyOut(ac AsyncCopier, handle device.Stream, data []byte, base device.Ptr, fresh bool) error {
	b := st.rt.backend
	return st.spread(len(data), func(mine []stageSlot, claim func() (lo, hi int, ok bool)) error {
		type piece struct {
			slot *stageSlot
			dst  []byte
		}
		var queue []piece // in the order queued, slotsPerThread at most
		for k := 0; ; {
			for len(queue) < slotsPerThread {
				lo, hi, ok := claim()
				if !ok {
					break
				}
				slot := &mine[k%slotsPerThread]
				k++
				if err := ac.DownloadAsync(slot.buf.data[:hi-lo], base+device.Ptr(lo), handle); err != nil {
					return err
				}
				if err := b.Record(slot.event, handle); err != nil {
					return err
				}
				slot.queued = true
				queue = append(queue, piece{slot, data[lo:hi]})
				if fresh {
					_ = prefault.Pages(data[lo:hi], 1, nil) // refused: the copy out faults the pages in
				}
			}
			if len(queue) == 0 {
				return nil
			}
			p := queue[0]
			queue = queue[1:]
			if err := b.EventSynchronize(p.slot.event); err != nil {
				return err
			}
			if err := npy.Access(func() { copy(p.dst, p.slot.buf.data[:len(p.dst)]) }); err != nil {
				return err // into a mapped file that cannot take the bytes
			}
		}
	})
}
