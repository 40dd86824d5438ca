package pool

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gluaproject/glua/device"
)

// recentMax is how many freed chunks wait, unmerged, to serve a request of
// exactly their size before they go to the free list. A loop that
// allocates and frees the same sizes then costs no tree operation;
// anything that needs the whole picture (a request nothing in recent fits,
// a release, Stats) flushes them first.
const recentMax = 8

// binding says which streams may reuse a free chunk. An unbound chunk may
// serve any stream. A bound one was freed on stream, as free number seq,
// and serves only that stream (stream order makes that safe) until an
// event recorded on the stream after the free is done.
type binding struct {
	bound  bool
	stream device.Stream
	seq    uint64
}

// usableBy reports whether stream s may reuse the memory.
func (b *binding) usableBy(s device.Stream) bool { return !b.bound || b.stream == s }

// fence is the event that frees on one stream wait on before the memory
// may serve another stream. It is recorded lazily: a free only notes its
// sequence number in last, and the event is recorded when another stream
// looks for memory, when the cache is trimmed or at a synchronisation
// point. A program that uses one stream never records one, and a free
// costs no driver call.
type fence struct {
	ev      device.Event
	ok      bool   // ev exists
	pending bool   // ev recorded and not yet seen done
	seq     uint64 // frees up to seq are covered by ev, or known done
	done    uint64 // frees up to done are known to be done
	last    uint64 // the latest free on the stream
}

// freeChunks is where the stream order hands memory once it may be reused:
// the free list.
type freeChunks interface {
	insert(ch *chunk)
	unbind(s device.Stream, upto uint64) bool
	anyBound() bool
}

// streamOrder decides which stream may reuse a freed chunk, and when.
// Every freed chunk passes through it on its way to the free list: it
// binds the chunk to its stream, keeps it aside for a while to serve its
// own size again (recent), or until the other streams that used it are
// done (waiting), and unbinds a stream's chunks once its fence is done.
// On a synchronous source (no EventSource) every free is done at once and
// nothing is bound.
type streamOrder struct {
	events EventSource        // nil for a synchronous source
	syncer DeviceSynchronizer // nil when the source cannot wait for the device
	free   freeChunks

	recent  []*chunk // chunkCached, oldest first
	waiting []*chunk // chunkWaiting
	fences  map[device.Stream]*fence
	// The fence of the stream freed on last: most frees are on the same
	// stream as the one before, and the map lookup showed in the profile.
	lastStream device.Stream
	lastFence  *fence
	seq        uint64
	spare      []device.Event // recorded-and-done events, for reuse
}

func newStreamOrder(events EventSource, syncer DeviceSynchronizer, free freeChunks) *streamOrder {
	return &streamOrder{events: events, syncer: syncer, free: free, fences: make(map[device.Stream]*fence)}
}

// async reports whether work runs on streams, so that frees can be bound.
func (o *streamOrder) async() bool { return o.events != nil }

// freed takes ch, just freed from a block on stream s that was also used
// on streams uses, binds it to s and keeps it in recent, admitting the
// oldest there to the free list when recent is full.
func (o *streamOrder) freed(ch *chunk, s device.Stream, uses []device.Stream) error {
	// On a synchronous source the work is done, and a live chunk is bound
	// to nothing, so any stream may reuse it.
	if o.events != nil {
		o.seq++
		ch.bound, ch.stream, ch.seq = true, s, o.seq
		if o.lastFence == nil || o.lastStream != s {
			o.lastStream, o.lastFence = s, o.fenceOf(s)
		}
		o.lastFence.last = o.seq
		if len(uses) > 0 {
			return o.await(ch, uses)
		}
	}
	if len(o.recent) == recentMax {
		old := o.recent[0]
		o.recent = slices.Delete(o.recent, 0, 1)
		o.admit(old)
	}
	ch.state = chunkCached
	o.recent = append(o.recent, ch)
	return nil
}

// await keeps ch, used on other streams too, out of the free list until
// each of them is done, even for its own stream. When one of their events
// cannot be recorded it is held until Close, and the error says so.
func (o *streamOrder) await(ch *chunk, uses []device.Stream) error {
	for _, u := range uses {
		e, err := o.event()
		if err == nil {
			if err = o.events.Record(e, u); err != nil {
				o.spare = append(o.spare, e)
			}
		}
		if err != nil {
			o.spare = append(o.spare, ch.events...)
			ch.events = nil
			ch.state = chunkHeld
			return fmt.Errorf("recording the block's use on stream %#x (its %s are kept until the pool closes): %w",
				uintptr(u), formatBytes(ch.size), err)
		}
		ch.events = append(ch.events, e)
	}
	ch.state = chunkWaiting
	o.waiting = append(o.waiting, ch)
	return nil
}

// reuse takes from recent the newest chunk of exactly size bytes that
// stream s may use, live, if there is one.
func (o *streamOrder) reuse(size uint64, s device.Stream) *chunk {
	for i := len(o.recent) - 1; i >= 0; i-- {
		ch := o.recent[i]
		if ch.size == size && ch.usableBy(s) {
			o.recent = slices.Delete(o.recent, i, i+1)
			ch.state, ch.bound = chunkLive, false
			return ch
		}
	}
	return nil
}

// flush admits every chunk in recent to the free list, merged.
func (o *streamOrder) flush() {
	for i, ch := range o.recent {
		o.recent[i] = nil
		o.admit(ch)
	}
	o.recent = o.recent[:0]
}

// admit hands ch, freed earlier, to the free list. Its stream's fence may
// have been seen done since the free, or forgotten (which happens only
// once every free on the stream is done; see synchronized): then any
// stream may have it.
func (o *streamOrder) admit(ch *chunk) {
	if ch.bound {
		if f := o.fences[ch.stream]; f == nil || ch.seq <= f.done {
			ch.bound = false
		}
	}
	o.free.insert(ch)
}

// fenceOf is stream s's fence, made on first use.
func (o *streamOrder) fenceOf(s device.Stream) *fence {
	f := o.fences[s]
	if f == nil {
		f = &fence{}
		o.fences[s] = f
	}
	return f
}

// cover records stream s's event so that it covers every free on s so far,
// unless it already does. Re-recording a pending event moves it later: the
// memory freed earlier then waits a little longer, but one event per
// stream is enough.
func (o *streamOrder) cover(s device.Stream, f *fence) {
	if f.last <= f.seq {
		return
	}
	if !f.ok {
		e, err := o.event()
		if err != nil {
			return // the chunks stay bound to s until the device is synchronised
		}
		f.ev, f.ok = e, true
	}
	if err := o.events.Record(f.ev, s); err != nil {
		return
	}
	f.pending, f.seq = true, f.last
}

// coverStream covers the frees on stream s.
func (o *streamOrder) coverStream(s device.Stream) { o.cover(s, o.fenceOf(s)) }

// coverAll records the fence of every stream with frees not yet covered,
// except stream skip (whose own memory is usable to it already).
func (o *streamOrder) coverAll(skip device.Stream, skipping bool) {
	for s, f := range o.fences {
		if !skipping || s != skip {
			o.cover(s, f)
		}
	}
}

// event is a spare event or a new one.
func (o *streamOrder) event() (device.Event, error) {
	if n := len(o.spare); n > 0 {
		e := o.spare[n-1]
		o.spare = o.spare[:n-1]
		return e, nil
	}
	return o.events.NewEvent()
}

// poll looks at outstanding events without waiting, and makes the memory
// they guarded usable; it reports whether any became so.
func (o *streamOrder) poll() bool {
	ev := o.events
	if ev == nil {
		return false
	}
	promoted := false
	kept := o.waiting[:0]
	for _, ch := range o.waiting {
		if !allDone(ev, ch.events) {
			kept = append(kept, ch)
			continue
		}
		o.spare = append(o.spare, ch.events...)
		ch.events = nil
		o.admit(ch)
		promoted = true
	}
	clear(o.waiting[len(kept):])
	o.waiting = kept
	for s, f := range o.fences {
		if !f.pending {
			continue
		}
		if done, err := ev.EventDone(f.ev); err != nil || !done {
			continue
		}
		// The event goes back to the spares, so that a program creating
		// stream after stream holds events only for fences in flight; the
		// fence keeps how far its stream is known done.
		f.pending, f.done, f.ok = false, f.seq, false
		o.spare = append(o.spare, f.ev)
		if o.free.unbind(s, f.seq) {
			promoted = true
		}
	}
	return promoted
}

func allDone(ev EventSource, events []device.Event) bool {
	for _, e := range events {
		if done, err := ev.EventDone(e); err != nil || !done {
			return false
		}
	}
	return true
}

// settle makes every freed chunk usable on any stream, waiting for the
// device when the source can; otherwise it only polls. The caller has
// flushed recent first.
func (o *streamOrder) settle() error {
	if o.events == nil {
		return nil
	}
	if o.syncer == nil || (len(o.waiting) == 0 && !o.free.anyBound()) {
		o.coverAll(0, false)
		o.poll()
		return nil
	}
	if err := o.syncer.Synchronize(); err != nil {
		return fmt.Errorf("synchronising the device: %w", err)
	}
	for _, ch := range o.waiting {
		o.spare = append(o.spare, ch.events...)
		ch.events = nil
		o.admit(ch)
	}
	o.waiting = o.waiting[:0]
	for s, f := range o.fences {
		if f.ok {
			o.spare = append(o.spare, f.ev)
		}
		f.pending, f.seq, f.done, f.ok = false, o.seq, o.seq, false
		o.free.unbind(s, math.MaxUint64)
	}
	return nil
}

// synchronized flushes recent, covers every stream's frees and polls:
// after a synchronisation the events are done as soon as they are recorded.
func (o *streamOrder) synchronized() {
	o.flush()
	if o.events == nil {
		return
	}
	o.coverAll(0, false)
	o.poll()
	// A stream whose every free is known done has nothing bound to it any
	// more: forget its fence, so that a program (or a shared pool) going
	// through many short-lived streams does not keep one for each.
	for s, f := range o.fences {
		if !f.pending && !f.ok && f.last <= f.done {
			delete(o.fences, s)
			if o.lastFence == f {
				o.lastFence = nil
			}
		}
	}
}

// wait lets the device finish its queued work, before memory still in use
// on a stream goes back to the source at Close.
func (o *streamOrder) wait() error {
	if o.syncer == nil || o.events == nil {
		return nil
	}
	return o.syncer.Synchronize()
}

// close destroys every event, and forgets the chunks it holds.
func (o *streamOrder) close() error {
	for _, ch := range o.waiting {
		o.spare = append(o.spare, ch.events...)
		ch.events = nil
	}
	var errs []error
	if ev := o.events; ev != nil {
		for _, f := range o.fences {
			if f.ok {
				o.spare = append(o.spare, f.ev)
			}
		}
		for _, e := range o.spare {
			if err := ev.DestroyEvent(e); err != nil {
				errs = append(errs, err)
			}
		}
	}
	clear(o.fences)
	o.lastFence = nil
	o.recent, o.waiting, o.spare = nil, nil, nil
	return errors.Join(errs...)
}
