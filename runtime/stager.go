package runtime

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"

	"github.com/gluaproject/glua/device"
)

// stageChunk is the size of the pieces a Stager copies a pageable upload
// in. Each thread copies pieces into pinned slots of its own and queues
// each slot's copy to the device itself, so no thread waits for the others
// at the end of an array, and the pinned memory staging takes is a few
// slots per thread, not the size of the arrays in flight. On the H100's
// host, 8 GiB of pageable 64 MiB batches streamed through batch.iter this
// way at 0.54–0.80 of the bus, and through a whole pinned buffer per batch
// at 0.58–0.74 in the same leases: the host's memory, shared by the copy and
// the bus, sets the pace, and 1 or 4 MiB pieces, 8 threads or more slots
// were no faster.
const stageChunk = 2 << 20

// slotsPerThread lets a thread copy into one slot while the bus reads its
// other.
const slotsPerThread = 2

// A Stager uploads pageable host arrays on one stream at the bus's speed,
// through a few small pinned slots that it reuses from one upload to the
// next. It is what an iterator or a loop of uploads keeps; Close gives its
// pinned memory back to the runtime's cache.
type Stager struct {
	rt     *Runtime
	stream *Stream
	slots  []stageSlot
	closed bool
}

// stageSlot is one pinned slot and the event recorded after the copy that
// last read it.
type stageSlot struct {
	buf    *HostArray
	event  device.Event
	queued bool // event was recorded after a copy from buf
}

// NewStager returns a Stager for uploads on s (nil: the runtime's stream).
// It holds no memory until its first upload.
func (rt *Runtime) NewStager(s *Stream) *Stager {
	return &Stager{rt: rt, stream: s}
}

// Upload queues a copy of h into a on the stager's stream and returns once
// h's bytes have been copied out of it: h may change from then on, and a
// holds them once the stream passes this point. A pinned h is copied from
// directly.
func (st *Stager) Upload(a *Array, h *HostArray) error {
	if st.closed {
		return errors.New("the stager is closed")
	}
	if h != nil && h.pinned {
		return a.CopyFromAsync(h, st.stream)
	}
	handle, ac, err := a.asyncCopy("source", h, st.stream, false)
	if err != nil || a.size == 0 {
		return err
	}
	err = st.copyIn(ac, handle, a.ptr(), h.data)
	goruntime.KeepAlive(h)
	return err
}

// copyIn queues the copy of data to base on s through the slots.
func (st *Stager) copyIn(ac AsyncCopier, handle device.Stream, base device.Ptr, data []byte) error {
	return st.spread(len(data), func(mine []stageSlot, claim func() (lo, hi int, ok bool)) error {
		for k := 0; ; k++ {
			lo, hi, ok := claim()
			if !ok {
				return nil
			}
			if err := st.copyPiece(&mine[k%slotsPerThread], ac, handle, base+device.Ptr(lo), data[lo:hi]); err != nil {
				return err
			}
		}
	})
}

// spread runs work on as many threads as prepare gives an n-byte copy,
// each with slots of its own. claim hands out the pieces in order, and
// none once a thread has failed.
func (st *Stager) spread(n int, work func(mine []stageSlot, claim func() (lo, hi int, ok bool)) error) error {
	chunks := (n + stageChunk - 1) / stageChunk
	threads, err := st.prepare(n)
	if err != nil {
		return err
	}
	var next atomic.Int64
	var failed atomic.Bool
	claim := func() (lo, hi int, ok bool) {
		c := int(next.Add(1)) - 1
		if c >= chunks || failed.Load() {
			return 0, 0, false
		}
		return c * stageChunk, min((c+1)*stageChunk, n), true
	}
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[t] = work(st.slots[t*slotsPerThread:(t+1)*slotsPerThread], claim); errs[t] != nil {
				failed.Store(true)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// prepare makes sure there are slots for an upload of n bytes: two for
// each thread that will copy, one per processor at most, of a piece each.
func (st *Stager) prepare(n int) (threads int, err error) {
	threads = min(goruntime.GOMAXPROCS(0), (n+stageChunk-1)/stageChunk)
	return threads, st.reserve(threads*slotsPerThread, min(n, stageChunk))
}

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
		return st.copyIn(ac, rt.stream, a.ptr(), data)
	})
}

// stagedDownload is stagedUpload's other direction: the bus writes pieces
// of src into pinned slots and threads copy each out into data once its
// copy has ended. The driver's own copy into pageable memory runs at
// about 15 GB/s on the H100's host, under a third of the bus.
func (rt *Runtime) stagedDownload(data []byte, src device.Ptr) (ok bool, err error) {
	return rt.staged(len(data), func(st *Stager, ac AsyncCopier) error {
		return st.copyOut(ac, rt.stream, data, src)
	})
}

// staged runs copy with a Stager for n bytes, or reports that it cannot.
func (rt *Runtime) staged(n int, copy func(*Stager, AsyncCopier) error) (ok bool, err error) {
	ac, async := rt.backend.(AsyncCopier)
	if _, pinned := rt.backend.(PinnedHost); !async || !pinned || n < stagedMin {
		return false, nil
	}
	st := rt.NewStager(nil)
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
// the piece before out of the other.
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
			copy(p.dst, p.slot.buf.data[:len(p.dst)])
		}
	})
}

// copyPiece copies src into slot once the bus has read what the slot last
// held, and queues the slot's copy to dst.
func (st *Stager) copyPiece(slot *stageSlot, ac AsyncCopier, s device.Stream, dst device.Ptr, src []byte) error {
	b := st.rt.backend
	if slot.queued {
		if err := b.EventSynchronize(slot.event); err != nil {
			return err
		}
	}
	buf := slot.buf.data[:len(src)]
	copy(buf, src)
	if err := ac.UploadAsync(dst, buf, s); err != nil {
		return err
	}
	if err := b.Record(slot.event, s); err != nil {
		return err
	}
	slot.queued = true
	return nil
}

// reserve makes sure there are count slots of at least size bytes, each
// with its event, replacing slots that are too small.
func (st *Stager) reserve(count, size int) error {
	for i := range count {
		if i == len(st.slots) {
			e, err := st.rt.backend.NewEvent()
			if err != nil {
				return err
			}
			st.slots = append(st.slots, stageSlot{event: e})
		}
		slot := &st.slots[i]
		if slot.buf != nil && len(slot.buf.data) >= size {
			continue
		}
		if err := st.drop(slot); err != nil {
			return err
		}
		buf, err := st.rt.newHostArray([]int{size}, device.Uint8, true, false)
		if err != nil {
			return fmt.Errorf("staging: %w", err)
		}
		slot.buf = buf
	}
	return nil
}

// drop waits for the copy that last read slot's buffer and gives the
// buffer back to the runtime's pinned cache.
func (st *Stager) drop(slot *stageSlot) error {
	if slot.buf == nil {
		return nil
	}
	var err error
	if slot.queued {
		err = st.rt.backend.EventSynchronize(slot.event)
		slot.queued = false
	}
	st.rt.ReleasePinned(slot.buf)
	slot.buf = nil
	return err
}

// Close waits for the stager's copies to read its slots and gives their
// memory back to the runtime. Closing twice is harmless.
func (st *Stager) Close() error {
	if st.closed {
		return nil
	}
	st.closed = true
	if st.rt.usable() != nil {
		st.slots = nil // the runtime let go of its pinned memory and events when it closed
		return nil
	}
	var errs []error
	for i := range st.slots {
		errs = append(errs, st.drop(&st.slots[i]), st.rt.backend.DestroyEvent(st.slots[i].event))
	}
	st.slots = nil
	return errors.Join(errs...)
}
