package cuda

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// A kernel launch costs the driver 3–4 µs of host time on the hosts glua
// was measured on, more than everything glua does around it. A Lua loop of
// small kernels therefore hands its launches to a worker on an OS thread of
// its own, which calls cuLaunchKernel while the loop goes on to its next
// call: the loop then costs the larger of the two, not their sum. Where
// the loop is the faster of the two, launches pile up in the queue, and the
// worker gives the driver those waiting as one graph (rungraph.go), at a
// fraction of a launch's cost each: the loop's pace is then its own.
//
// Order is kept by one rule: every other call into the driver (begin)
// first waits until the worker has issued everything queued. So the
// driver sees the calls of one goroutine in the order they were made,
// exactly as without the queue, and no pointer, buffer or stream can be
// freed or reused under a launch that has not been issued yet.
//
// A launch goes straight to the driver instead, on the caller's thread,
// where the queue cannot help or would hide an error: a function's first
// launch (a resource error shows there, at its call); one that raises the
// function's shared-memory limit; one on a stream recording a graph; one
// whose result the host is about to read through a host word (hostword.go:
// the hand-over would only lengthen that wait); any launch while an NCCL
// communicator is open (aborting a group stuck on a lost rank must not
// wait for a worker stuck behind its collective); one of more than
// pooledParams arguments; and any launch while the worker sleeps, so that
// a single launch after a pause never waits for the worker to wake. The
// queue is off with CUDA_LAUNCH_BLOCKING=1 (every launch then waits for
// its kernel anyway) and where Go runs fewer than four threads at once,
// since the worker spins while launches come.

// queuedLaunch is one launch waiting for the worker: its arguments are
// copied, so the caller's values may change as soon as Launch returns.
type queuedLaunch struct {
	f      *Function
	grid   [3]uint32
	block  [3]uint32
	shared uint32
	stream device.Stream
	n      int
	slots  [pooledParams]uint64
}

// launchQueueDepth bounds how far the host may run ahead of the driver.
// A full queue makes Launch wait, so the Lua loop's pace is then the
// driver's.
const launchQueueDepth = 256

// workerSpin is how long the worker keeps looking for launches after the
// last one before it sleeps. Between two launches of a Lua loop lie a few
// microseconds; a sleeping worker takes tens to wake.
const workerSpin = 200 * time.Microsecond

// queueDriver is what the worker calls, all on its own thread.
type queueDriver struct {
	// start runs once first (making the context current).
	start func() error
	// issueRun gives the driver the first of es, or several of them in
	// order, and reports how many it gave, counting one it refused (the
	// error's); es holds one or more launches, none of them refused yet.
	issueRun func(es []*queuedLaunch, params *[pooledParams + 1]unsafe.Pointer) (int, error)
	// finish runs when the worker stops, after its last launch.
	finish func()
}

// maxRun bounds how many queued launches the worker hands issueRun at
// once.
const maxRun = 32

type launchQueue struct {
	d queueDriver

	mu   sync.Mutex // taken by producers; the worker never takes it
	ring [launchQueueDepth]queuedLaunch
	head atomic.Uint64 // next to issue; written by the worker only
	tail atomic.Uint64 // next free; written under mu

	params [pooledParams + 1]unsafe.Pointer // the worker's, into ring slots
	batch  [maxRun]*queuedLaunch            // the worker's: the entries it issues next

	// run counts the launches since the last other call on the backend.
	// A launch is queued only in a run of them: a lone launch between
	// other calls (a reduction's, which the host reads at once) would only
	// wait for the hand-over. A sleeping worker is woken once a run is
	// long enough to be a loop's.
	run atomic.Int64

	asleep atomic.Bool
	wake   chan struct{} // one token: a sleeping worker has work
	quit   chan struct{}
	done   chan struct{}

	// failed is the first launch the driver refused after it was queued.
	// Launches queued after it are dropped rather than run on top of a
	// missing result, and the next call on the backend returns it.
	failed atomic.Pointer[error]

	issued atomic.Int64 // launches the worker gave the driver
}

// launchQueueWanted says whether this process should queue launches.
func launchQueueWanted() bool {
	return os.Getenv("CUDA_LAUNCH_BLOCKING") != "1" && runtime.GOMAXPROCS(0) >= 4
}

// newLaunchQueue starts the worker. If start fails the worker exits and
// newLaunchQueue returns nil: launches then all go straight to the driver.
func newLaunchQueue(d queueDriver) *launchQueue {
	q := &launchQueue{
		d:    d,
		wake: make(chan struct{}, 1),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	started := make(chan error)
	go q.work(started)
	if err := <-started; err != nil {
		return nil
	}
	return q
}

func (q *launchQueue) work(started chan<- error) {
	defer close(q.done)
	// The thread stays locked: the context made current on it stays so,
	// and the goroutine's exit ends the thread with it.
	runtime.LockOSThread()
	if err := q.d.start(); err != nil {
		started <- err
		return
	}
	if q.d.finish != nil {
		defer q.d.finish()
	}
	q.asleep.Store(true)
	started <- nil
	var idle time.Time
	spins := 0
	for {
		h, t := q.head.Load(), q.tail.Load()
		if h != t {
			m := int(min(t-h, maxRun))
			for i := range m {
				q.batch[i] = &q.ring[(h+uint64(i))%launchQueueDepth]
			}
			// After a refusal every launch is dropped, the rest of the
			// batch with it.
			n := m
			if q.failed.Load() == nil {
				took, err := q.d.issueRun(q.batch[:m], &q.params)
				q.issued.Add(int64(took))
				if err != nil {
					q.failed.Store(&err)
				} else {
					n = took
				}
			}
			for _, e := range q.batch[:n] {
				e.f = nil
			}
			q.head.Store(h + uint64(n))
			spins = 0
			continue
		}
		spins++
		if spins == 1 {
			idle = time.Now()
		} else if spins%64 == 0 && time.Since(idle) > workerSpin {
			if !q.sleep() {
				return
			}
			spins = 0
		}
	}
}

// sleep parks the worker until a producer has work for it, and reports
// false when the queue is stopped. A producer stores its launch, then
// reads asleep; the worker stores asleep, then reads the tail: one of the
// two sees the other, so a queued launch never waits for a sleeper that
// no one wakes.
func (q *launchQueue) sleep() bool {
	select {
	case <-q.wake: // sent while the worker woke: it has looked since
	default:
	}
	q.asleep.Store(true)
	if q.head.Load() == q.tail.Load() {
		select {
		case <-q.wake:
		case <-q.quit:
			q.asleep.Store(false)
			return q.head.Load() != q.tail.Load() // issue what is left first
		}
	}
	q.asleep.Store(false)
	return true
}

// push queues a launch and reports true, or reports false when the
// launch should go straight to the driver (it is not in a run, the worker
// sleeps, or a queued launch has failed). slots holds the marshalled
// arguments.
func (q *launchQueue) push(f *Function, grid, block [3]uint32, shared uint32, s device.Stream, slots []uint64) bool {
	run := q.run.Add(1)
	if run < 2 {
		return false
	}
	q.mu.Lock()
	if q.asleep.Load() || q.failed.Load() != nil {
		q.mu.Unlock()
		if run >= wakeRun {
			q.rouse()
		}
		return false
	}
	t := q.tail.Load()
	for spins := 0; t-q.head.Load() >= launchQueueDepth; spins++ {
		if spins > 64 {
			runtime.Gosched()
		}
	}
	e := &q.ring[t%launchQueueDepth]
	e.f, e.grid, e.block, e.shared, e.stream, e.n = f, grid, block, shared, s, len(slots)
	copy(e.slots[:], slots)
	q.tail.Store(t + 1)
	q.mu.Unlock()
	if q.asleep.Load() {
		q.rouse()
	}
	return true
}

// wakeRun is the run of launches that wakes a sleeping worker.
const wakeRun = 4

// other notes a call on the backend that is not a launch: it ends a run.
func (q *launchQueue) other() {
	if q.run.Load() != 0 {
		q.run.Store(0)
	}
}

// rouse wakes a sleeping worker; a token already waiting is enough.
func (q *launchQueue) rouse() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// drain waits until the worker has issued every launch queued before the
// call, and returns (once) the error of a launch the driver refused. It
// does not wait for launches queued meanwhile by other goroutines, whose
// order against this call is not defined anyway: a loop of launches on one
// goroutine must not hold up another goroutine's copy for as long as the
// loop runs.
func (q *launchQueue) drain() error {
	target := q.tail.Load()
	for spins := 0; q.head.Load() < target; spins++ {
		if spins > 64 {
			runtime.Gosched()
		}
	}
	if q.failed.Load() != nil {
		if p := q.failed.Swap(nil); p != nil {
			return *p
		}
	}
	return nil
}

// stop issues what is queued and ends the worker.
func (q *launchQueue) stop() error {
	err := q.drain()
	close(q.quit)
	<-q.done
	return err
}
