package runtime

import (
	goruntime "runtime"
	"time"
)

// collect is the pool's third rung before an out-of-memory error: run Go's
// collector so that arrays Lua no longer references are found, wait for their
// cleanups to queue them, and free them.
func (rt *Runtime) collect() {
	rt.sweepScript()
	rt.graduate()
	for round := 0; round < 2; round++ {
		collectAndWait(200 * time.Millisecond)
	}
	rt.drain()
}

// collectAndWait runs Go's collector and waits, at most timeout, for the
// cleanups it queued: they run on a goroutine of their own afterwards, and
// a sentinel's cleanup, queued in the same cycle, says the queue got that
// far (the timeout keeps a late one from holding the caller).
func collectAndWait(timeout time.Duration) {
	done := make(chan struct{})
	goruntime.AddCleanup(new([16]byte), func(c chan struct{}) { close(c) }, done)
	goruntime.GC()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}

// gcMinBytes is the least a runtime allocates between the collections it
// starts itself, so that a small working set does not collect constantly.
const gcMinBytes = 16 << 20

// gcPacer counts what the runtime allocates towards the next collection it
// starts itself (collectIfDue). Only the runtime's goroutine touches it.
type gcPacer struct {
	// allocatedSinceGC counts the bytes allocated since the last
	// collection this runtime started, gcTrigger is the count that starts
	// the next.
	allocatedSinceGC, gcTrigger uint64
	// givenSinceGC is what of allocatedSinceGC went to arrays given to
	// the script, which a walk of the Lua state finds (sweep.go).
	givenSinceGC uint64
	collected    chan struct{} // closed when it has; nil when none runs
}

// count adds nbytes allocated; it returns the trigger in effect, never
// under gcMinBytes, and whether the count reached it.
func (p *gcPacer) count(nbytes uint64) (trigger uint64, due bool) {
	p.allocatedSinceGC += nbytes
	trigger = max(p.gcTrigger, gcMinBytes)
	return trigger, p.allocatedSinceGC >= trigger
}

// freed uncounts nbytes the script freed itself: memory given back that
// way is no reason to collect.
func (p *gcPacer) freed(nbytes uint64) {
	p.allocatedSinceGC -= min(p.allocatedSinceGC, nbytes)
}

// given counts nbytes of the allocated among arrays given to the script.
func (p *gcPacer) given(nbytes uint64) { p.givenSinceGC += nbytes }

// swept uncounts what was given to the script, which a complete walk of
// the Lua state has just looked at, and sets next as the trigger; it
// reports whether the count still reaches trigger, the one that started
// the walk.
func (p *gcPacer) swept(trigger, next uint64) (due bool) {
	p.allocatedSinceGC -= min(p.givenSinceGC, p.allocatedSinceGC)
	p.givenSinceGC = 0
	p.gcTrigger = next
	return p.allocatedSinceGC >= trigger
}

// awaitPrevious decides whether a collection may start now: when none
// runs, when the last one has ended, or, once another trigger's worth was
// allocated meanwhile, after waiting for it. ended reports that one did,
// whose cleanups have queued what it found.
func (p *gcPacer) awaitPrevious(trigger uint64) (start, ended bool) {
	if p.collected == nil {
		return true, false
	}
	select {
	case <-p.collected:
	default:
		if p.allocatedSinceGC < 2*trigger {
			return false, false
		}
		<-p.collected
	}
	p.collected = nil
	return true, true
}

// started starts counting afresh towards next, for the collection that
// closes done when it has.
func (p *gcPacer) started(next uint64, done chan struct{}) {
	p.allocatedSinceGC, p.givenSinceGC = 0, 0
	p.gcTrigger = next
	p.collected = done
}

// collectIfDue looks for dropped arrays when the arrays allocated since
// the last look pass [pool] gc_percent of the bytes live arrays held then
// (and gcMinBytes): Go's own pacing sees only the few bytes of Go memory an
// array takes, not its device memory, so without this a loop that drops
// arrays fills the device before anything is collected (CUDA.jl paces its
// collector by device memory the same way). The arrays a script was given
// are found by walking the Lua state, at once (sweepScript); those Go code
// made, and a script's when the walk cannot see everything, by Go's
// collector.
func (rt *Runtime) collectIfDue(nbytes uint64) {
	if rt.cfg.Pool.GCPercent < 0 {
		return
	}
	p := &rt.mem.pacer
	trigger, due := p.count(nbytes)
	if !due || rt.sweep.soon(p.allocatedSinceGC, trigger) {
		return
	}
	if rt.sweepScript() && !p.swept(trigger, rt.nextTrigger()) {
		return
	}
	rt.startCollection(trigger)
}

// nextTrigger is [pool] gc_percent of what live arrays hold now. It reads
// the runtime's own list: pool.Stats would ask the device for its free
// memory too, which takes as long as a walk on the GPU.
func (rt *Runtime) nextTrigger() uint64 {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.mem.buffers.bytes / 100 * uint64(rt.cfg.Pool.GCPercent)
}

// startCollection starts Go's collector on a goroutine of its own,
// concurrently with the script; the cleanups it triggers queue the dropped
// arrays, and the next allocation frees them. A script that allocates
// another trigger's worth before the collection is done waits for it,
// which bounds the memory dropped arrays can hold.
func (rt *Runtime) startCollection(trigger uint64) {
	p := &rt.mem.pacer
	start, ended := p.awaitPrevious(trigger)
	if !start {
		return
	}
	if ended {
		rt.drain()
	}
	done := make(chan struct{})
	p.started(rt.nextTrigger(), done)
	rt.graduate() // the newest arrays too, so that this collection can find them
	go func() {
		collectAndWait(200 * time.Millisecond)
		close(done)
	}()
}
