package runtime

import (
	"errors"

	"github.com/gluaproject/glua/device"
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
// about 15 GB/s on the H100's host, under a third of the bus.
func (rt *Runtime) stagedDownload(data []byte, src device.Ptr) (ok bool, err error) {
	return rt.staged(len(data), func(st *Stager, ac AsyncCopier) error {
		return st.copyOut(ac, rt.streams.own, data, src)
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
// the piece before out of the other. Where data's pages are not there yet
// (a new download array's fresh memory, advised for huge pages), the copy
// out faults them in, each thread its own pieces. Asking the kernel for
// each piece's pages ahead of the copy (MADV_POPULATE_WRITE) was slower:
// its requests from many threads wait for one another, where first writes
// do not. On a 64-core H200 host, 1 GiB of fresh memory filled at 8 GB/s
// by such requests on 12 threads against 21 GB/s by copies on the same
// threads (scripts/bench/pagefault.c), and first downloads into new 1 GiB
// and 4 GiB arrays ran at 36-48 GB/s with the requests and at 43-48
// without, 0.90-0.96 of downloads into existing arrays.
func (st *Stager) copyOut(ac AsyncCopier, handle device.Stream, data []byte, base device.Ptr) error {
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
