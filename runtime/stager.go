package runtime

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/parallel"
	"github.com/gluaproject/glua/npy"
)

// stageChunk is the size of the pieces a Stager copies pageable memory
// in. Each thread copies pieces into pinned slots of its own and queues
// each slot's copy itself, so the pinned memory staging takes is a few
// slots per thread, not the size of the arrays in flight.
const stageChunk = 2 << 20

// slotsPerThread lets a thread copy into one slot while the bus reads its
// other.
const slotsPerThread = 2

// idleSpin is how long a staging thread with nothing to copy keeps looking
// for more before it sleeps. A function source queues one batch at a time
// and the threads run dry at the end of each; woken from sleep, on a
// virtual machine's processors, they started the next batch late, and the
// bus idled. With the spin, 64 MiB pageable batches from a function ran
// at 0.906–0.917 of the pinned bus against 0.888–0.915 without it on one
// H200 host, and (spinning without yielding) at 0.910–0.913 against
// 0.875–0.881 on another, rounds alternating, lists unchanged; 1 ms was
// no better than 300 µs.
const idleSpin = 300 * time.Microsecond

// pairedPieces is how many pieces a thread takes at once, into one slot
// and one copy, while more uploads are queued behind the one it copies:
// the bus's cost per copy then caps a stream's rate, and halving the
// copies raised 8 GiB of 64 MiB pageable batches from 0.90–0.95 of the
// bus to 0.90–1.00, and memory-mapped .npy rows from 0.91–0.95 to
// 0.91–0.97, on the H100 in six alternating rounds over two leases. An
// upload waited for alone keeps single pieces: its last ones would come
// later, and a stream from a function, one batch at a time, lost 12–35%
// with pieces twice as large.
const pairedPieces = 2

// A Stager uploads pageable host arrays on one stream at the bus's speed,
// through a few small pinned slots that it reuses from one upload to the
// next. It is what an iterator or a loop of uploads keeps; Close gives its
// pinned memory back to the runtime's cache. The runtime's own large
// copies to and from pageable memory use one for the copy.
//
// Its threads live as long as it does and take the pieces of queued
// uploads in order, from one array into the next without waiting for
// each other at the end of an array. In a test of the driver alone on the
// H100's host, 8 GiB of 64 MiB pageable batches staged this way kept
// 0.86–0.90 of the bus in every round, where threads started for each
// batch and joined at its end ran at 0.41–0.85 in the same leases: a
// batch lasts about a millisecond, and waking the threads for each one,
// on a virtual machine's processors, took a large and varying share of it.
type Stager struct {
	rt     *Runtime
	stream *Stream
	slots  []stageSlot
	closed bool
	paired bool // slots hold pairedPieces pieces, and threads take pairs

	// The upload queue, which Queue fills and the threads empty. Only
	// mu's holder touches it; cond wakes threads and waiters.
	mu      sync.Mutex
	cond    *sync.Cond
	jobs    []*Staged // queued, not yet all copied: the oldest first
	threads int       // running, thread t with slots [t*slotsPerThread, (t+1)*slotsPerThread)
	stop    bool      // the threads should end once idle
	cancel  bool      // Close: drop the pieces not yet copied
	failed  error     // the first failure; later uploads are refused
	running sync.WaitGroup
	// news counts the uploads queued and the calls to stop, so that an
	// idle thread can watch for them without the lock (wake).
	news atomic.Uint64
}

// stageSlot is one pinned slot and the event recorded after the copy that
// last read it.
type stageSlot struct {
	buf    *HostArray
	event  device.Event
	queued bool // event was recorded after a copy from buf
}

// Staged is one upload queued by Stager.Queue. Its fields below st
// belong to the holder of st.mu.
type Staged struct {
	st          *Stager
	h           *HostArray // kept until its bytes are copied out
	data        []byte
	dst         device.Ptr
	handle      device.Stream
	ac          AsyncCopier
	after, done *Event
	pieces      int
	direct      bool // pinned: one copy straight from data, no slot
	claimed     int  // pieces handed to threads
	settled     int  // pieces copied and queued, or dropped
	over        bool // this upload and every earlier one settled; done recorded
	err         error
}

// NewStager returns a Stager for uploads on s (nil: the runtime's stream).
// It holds no memory until its first upload.
func (rt *Runtime) NewStager(s *Stream) *Stager {
	st := &Stager{rt: rt, stream: s, paired: true}
	st.cond = sync.NewCond(&st.mu)
	rt.mu.Lock()
	rt.xfer.addStager(st)
	rt.mu.Unlock()
	return st
}

// Upload queues a copy of h into a on the stager's stream and returns once
// h's bytes have been copied out of it: h may change from then on, and a
// holds them once the stream passes this point. A pinned h is copied from
// directly.
func (st *Stager) Upload(a *Array, h *HostArray) error {
	u, err := st.Queue(a, h, nil, nil)
	if err != nil {
		return err
	}
	return u.Wait()
}

// Queue starts a copy of h into a on the stager's stream and returns at
// once; Wait on the result returns once h's bytes have been copied out of
// it and its copies queued. With after, the copies wait on the device for
// the work before it (copies of uploads queued earlier may wait for it
// too). done is recorded on the stream once this upload's copies and
// every earlier one's are queued, so that waiting for it waits for them
// (and perhaps for some of a later upload's). h must not change until
// Wait returns; a pinned h is copied from directly. One goroutine queues.
func (st *Stager) Queue(a *Array, h *HostArray, after, done *Event) (*Staged, error) {
	if st.closed {
		return nil, errors.New("the stager is closed")
	}
	pinned := h != nil && h.pinned
	handle, ac, err := a.asyncCopy("source", h, st.stream, pinned)
	if err != nil {
		return nil, err
	}
	for _, e := range []*Event{after, done} {
		if e != nil && e.rt != st.rt {
			return nil, errors.New("the event belongs to another runtime")
		}
	}
	u := &Staged{st: st, h: h, data: h.data, dst: a.ptr(), handle: handle, ac: ac, after: after, done: done}
	if a.size == 0 {
		u.data = nil
	}
	if err := st.queue(u, pinned); err != nil {
		return nil, err
	}
	return u, nil
}

// queue puts u in the queue, or copies it at once when it is pinned and
// nothing is queued before it.
func (st *Stager) queue(u *Staged, pinned bool) error {
	if len(u.data) > 0 && !pinned {
		u.pieces = (len(u.data) + stageChunk - 1) / stageChunk
		if err := st.grow(len(u.data)); err != nil {
			return err
		}
	} else if len(u.data) > 0 {
		u.pieces = 1 // one copy straight from the pinned array
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.failed != nil {
		return st.failed
	}
	if u.after != nil {
		// The copies of uploads queued before may queue behind this wait
		// too: they are needed no sooner than this one.
		if err := st.rt.backend.StreamWaitEvent(u.handle, u.after.handle); err != nil {
			return err
		}
	}
	if len(st.jobs) == 0 && (pinned || u.pieces == 0) {
		// Nothing queued before it and nothing to stage: queue it here.
		var err error
		if u.pieces > 0 {
			err = u.ac.UploadAsync(u.dst, u.data, u.handle)
		}
		u.err, u.settled = err, u.pieces
		st.finishLocked(u)
		return u.err
	}
	u.direct = pinned // behind staged uploads: a thread copies it in its turn
	st.jobs = append(st.jobs, u)
	st.wakeLocked()
	return nil
}

// Wait returns once the upload's bytes have been copied out of its host
// array and its copies queued, with the first error in doing so.
func (u *Staged) Wait() error {
	st := u.st
	st.mu.Lock()
	defer st.mu.Unlock()
	for !u.over {
		st.cond.Wait()
	}
	return u.err
}

// wakeLocked tells the threads, sleeping or spinning, that there is news:
// an upload queued, or an order to stop.
func (st *Stager) wakeLocked() {
	st.news.Add(1)
	st.cond.Broadcast()
}

// spinUntil calls done until it reports true or limit has passed. It
// yields to other goroutines only now and then: yielding at every call
// sent the spinning threads to the scheduler's shared queue over and over,
// and on the H200 the spin then gained nothing.
func spinUntil(done func() bool, limit time.Duration) {
	start := time.Now()
	for i := 1; !done(); i++ {
		if i%256 == 0 && time.Since(start) > limit {
			return
		}
		if i%8192 == 0 { // every 10–20 µs
			goruntime.Gosched()
		}
	}
}

// finishLocked records u's done event, if it was copied, and wakes
// whoever waits for u.
func (st *Stager) finishLocked(u *Staged) {
	if u.done != nil && u.err == nil && !st.cancel {
		if u.err = st.rt.backend.Record(u.done.handle, u.handle); u.err == nil {
			u.done.recorded = true
		}
	}
	if u.err != nil && st.failed == nil {
		st.failed = u.err
	}
	u.over, u.h, u.data = true, nil, nil
	st.cond.Broadcast()
}

// popLocked finishes the uploads at the head of the queue whose pieces
// are all settled. Uploads are finished in the order they were queued,
// so that a done event follows its upload's copies and every earlier
// one's. It may follow some of a later upload's copies too: the threads
// queue pieces as they copy them, never waiting for each other.
func (st *Stager) popLocked() {
	for len(st.jobs) > 0 && st.jobs[0].settled == st.jobs[0].pieces {
		st.finishLocked(st.jobs[0])
		st.jobs = st.jobs[1:]
	}
}

// grow makes sure there are threads and slots, as layout says, for an
// upload of n bytes. Growing waits for the uploads queued so far.
func (st *Stager) grow(n int) error {
	want, size := layout(n)
	if st.paired {
		size = min(n, pairedPieces*stageChunk)
	}
	if want <= st.threads && len(st.slots) > 0 && st.slots[0].buf != nil && len(st.slots[0].buf.data) >= size {
		return nil
	}
	st.mu.Lock()
	for len(st.jobs) > 0 {
		st.cond.Wait()
	}
	st.stop = true
	st.wakeLocked()
	st.mu.Unlock()
	st.running.Wait()
	st.stop = false
	threads := max(want, st.threads)
	if len(st.slots) > 0 && st.slots[0].buf != nil {
		size = max(size, len(st.slots[0].buf.data))
	}
	if err := st.reserve(threads*slotsPerThread, size); err != nil {
		st.threads = 0 // the slots may be fewer now; the next upload starts over
		return err
	}
	st.threads = threads
	for t := range threads {
		st.running.Add(1)
		go st.work(st.slots[t*slotsPerThread : (t+1)*slotsPerThread])
	}
	return nil
}

// work is one of the stager's threads: it copies pieces of the queued
// uploads, in order, into its slots, and queues each slot's copy as soon
// as the slot is filled, holding the lock only to take and settle pieces.
func (st *Stager) work(mine []stageSlot) {
	defer st.running.Done()
	b := st.rt.backend
	st.mu.Lock()
	defer st.mu.Unlock()
	// Since its last piece, a thread spins once before it sleeps, when
	// there are processors left for the goroutine that queues uploads.
	spun := false
	for k := 0; ; {
		var u *Staged
		for _, j := range st.jobs {
			if j.claimed < j.pieces {
				u = j
				break
			}
		}
		if u == nil || st.cancel {
			if st.stop {
				return
			}
			if !spun && !st.cancel && st.threads < goruntime.GOMAXPROCS(0) {
				spun = true
				seen := st.news.Load()
				st.mu.Unlock()
				spinUntil(func() bool { return st.news.Load() != seen }, idleSpin)
				st.mu.Lock()
				continue
			}
			st.cond.Wait()
			continue
		}
		spun = false
		c := u.claimed
		take := 1
		if st.paired && !u.direct && u.pieces-c >= pairedPieces && u != st.jobs[len(st.jobs)-1] {
			take = pairedPieces // a stream: another upload is queued behind
		}
		u.claimed += take
		lo, hi := c*stageChunk, min((c+take)*stageChunk, len(u.data))
		if u.direct {
			hi = len(u.data) // one copy of the whole pinned array
		}
		src := u.data[lo:hi] // u stays queued, and its data with it, until this piece settles
		st.mu.Unlock()
		var slot *stageSlot
		var err error
		if !u.direct {
			slot = &mine[k%slotsPerThread]
			k++
			if slot.queued {
				err = b.EventSynchronize(slot.event)
			}
			if err == nil {
				// src may be a mapped file's (batch.chunks of one): a page
				// of it that cannot be had is this upload's error.
				buf := slot.buf.data
				err = npy.Access(func() { copy(buf, src) })
				src = buf[:hi-lo]
			}
		}
		// After Close, nothing more is queued: the arrays may be freed.
		if err == nil && !st.cancelled() {
			if err = u.ac.UploadAsync(u.dst+device.Ptr(lo), src, u.handle); err == nil && slot != nil {
				err = b.Record(slot.event, u.handle)
				slot.queued = err == nil
			}
		}
		st.mu.Lock()
		if err != nil && u.err == nil {
			u.err = err
		}
		u.settled += take
		st.popLocked()
	}
}

// cancelled reports whether Close has begun.
func (st *Stager) cancelled() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.cancel
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
	parallel.Do(threads, func(t int) {
		if errs[t] = work(st.slots[t*slotsPerThread:(t+1)*slotsPerThread], claim); errs[t] != nil {
			failed.Store(true)
		}
	})
	return errors.Join(errs...)
}

// prepare makes sure there are slots for a copy of n bytes on the
// threads layout gives it.
func (st *Stager) prepare(n int) (threads int, err error) {
	threads, size := layout(n)
	return threads, st.reserve(threads*slotsPerThread, size)
}

// layout is the threads and slot size a copy of n bytes takes: a thread
// per piece, stageThreads at most, each with two slots of a piece.
func layout(n int) (threads, size int) {
	return min(stageThreads(goruntime.GOMAXPROCS(0)), (n+stageChunk-1)/stageChunk), min(n, stageChunk)
}

// stageThreads is how many of procs processors a copy's threads take:
// three in four. The rest are left to the thread that queues the
// uploads, the driver's threads and Go's collector; a staging thread
// they push off its processor holds its piece, and with it the upload's
// end, until it runs again. On the H100's host (16 processors), 8 GiB of
// 64 MiB pageable batches streamed at 0.90–0.93 of the bus with 12
// threads and at 0.88–0.92 with 16, in six rounds of each, alternating.
func stageThreads(procs int) int {
	return max(1, procs-procs/4)
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

// stopThreads drops the pieces no thread has taken, lets the threads
// settle the ones they have, and ends them. Doing it again is harmless.
func (st *Stager) stopThreads() {
	st.mu.Lock()
	st.cancel, st.stop = true, true
	for _, u := range st.jobs {
		u.settled += u.pieces - u.claimed
		u.claimed = u.pieces
		if u.err == nil {
			u.err = errors.New("the stager was closed before the upload was copied")
		}
	}
	st.wakeLocked()
	st.mu.Unlock()
	st.running.Wait()
	st.mu.Lock()
	st.popLocked()
	st.mu.Unlock()
}

// Close waits for the stager's copies to read its slots and gives their
// memory back to the runtime. Closing twice is harmless.
func (st *Stager) Close() error {
	if st.closed {
		return nil
	}
	st.closed = true
	st.rt.mu.Lock()
	st.rt.xfer.dropStager(st)
	st.rt.mu.Unlock()
	st.stopThreads()
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
