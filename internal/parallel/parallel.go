// Package parallel shares a host copy among goroutines that outlive it.
//
// Staging a panel or a batch takes a few milliseconds on all of the
// host's processors, many times a second. A goroutine per processor
// started for each copy and joined at its end waits, at every join, for
// the last one to be scheduled: on the H100's virtual machine, threads
// woken for every batch in this way kept the bus busy for 0.41-0.85 of
// the time where threads that lived through the stream kept 0.86-0.90.
// Here the caller does the work too and waits only for the calls that
// helpers have begun, and the helpers stay a while between copies. For
// batch.Matmul's gathers, which last longer, it measured the same as
// goroutines started for each copy; it is the one mechanism for the
// host's parallel copies outside the Stager's own threads.
package parallel

import (
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Do calls f(i) for every i in [0, n), on the calling goroutine and on up
// to n-1 helpers, and returns once every call has returned. The calls may
// run in any order and at once.
func Do(n int, f func(i int)) {
	if n <= 0 {
		return
	}
	if n == 1 {
		f(0)
		return
	}
	j := &job{n: int64(n), f: f, done: make(chan struct{})}
	j.left.Store(int64(n))
	for range wake(n - 1) {
		select {
		case jobs <- j:
		default: // every helper has work queued; the caller does this
		}
	}
	j.run()
	<-j.done
}

// job is one call of Do: next is the next index to hand out, left the
// calls not yet returned.
type job struct {
	n          int64
	f          func(int)
	next, left atomic.Int64
	done       chan struct{}
}

// run makes calls until none is left to begin.
func (j *job) run() {
	for {
		i := j.next.Add(1) - 1
		if i >= j.n {
			return
		}
		j.f(int(i))
		if j.left.Add(-1) == 0 {
			close(j.done)
		}
	}
}

// idle is how long a helper waits for work before it ends.
const idle = 2 * time.Second

var (
	jobs    = make(chan *job, 1024)
	mu      sync.Mutex
	helpers int // running
)

// wake makes sure up to want helpers (one per other processor at most)
// are running, and returns how many are.
func wake(want int) int {
	mu.Lock()
	defer mu.Unlock()
	want = min(want, goruntime.GOMAXPROCS(0)-1)
	for helpers < want {
		helpers++
		go help()
	}
	return min(want, helpers)
}

// help runs jobs until none has come for idle.
func help() {
	t := time.NewTimer(idle)
	for {
		select {
		case j := <-jobs:
			j.run()
			t.Reset(idle)
		case <-t.C:
			mu.Lock()
			// A job queued meanwhile would wait for a helper to come
			// back; its caller runs it alone, so it is not stuck.
			helpers--
			mu.Unlock()
			return
		}
	}
}

// Helpers reports how many helpers are running, for tests.
func Helpers() int {
	mu.Lock()
	defer mu.Unlock()
	return helpers
}
