package pool

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/gluaproject/glua/device"
)

// checkStreamOrder verifies the stream order's own invariants; free is the
// chunks the free list holds.
func checkStreamOrder(o *streamOrder, free []*chunk) error {
	if o.events == nil && (len(o.fences) > 0 || len(o.waiting) > 0) {
		return fmt.Errorf("a synchronous source, yet %d fences and %d waiting chunks", len(o.fences), len(o.waiting))
	}
	for s, f := range o.fences {
		if f.done > f.seq || f.seq > o.seq || f.last > o.seq || f.pending && !f.ok {
			return fmt.Errorf("stream %d's fence %+v after %d frees", s, *f, o.seq)
		}
	}
	if o.lastFence != nil && o.fences[o.lastStream] != o.lastFence {
		return fmt.Errorf("the fence kept for stream %d is not the stream's", o.lastStream)
	}
	for _, ch := range o.waiting {
		if ch.state != chunkWaiting || !ch.bound || len(ch.events) == 0 {
			return fmt.Errorf("waiting chunk %#x in state %d, bound %v, with %d events", ch.ptr, ch.state, ch.bound, len(ch.events))
		}
	}
	if len(o.recent) > recentMax {
		return fmt.Errorf("%d chunks in recent, more than %d", len(o.recent), recentMax)
	}
	for _, ch := range o.recent {
		if ch.state != chunkCached || len(ch.events) > 0 || o.events == nil && ch.bound {
			return fmt.Errorf("recent chunk %#x in state %d, bound %v, with %d events", ch.ptr, ch.state, ch.bound, len(ch.events))
		}
	}
	// A free chunk stays bound only while its stream is not known done
	// with it: otherwise memory would sit unused for no reason.
	for _, ch := range free {
		if !ch.bound {
			continue
		}
		if f := o.fences[ch.stream]; f == nil || ch.seq <= f.done || ch.seq > o.seq {
			return fmt.Errorf("free chunk %#x is bound to stream %d as free %d, past its fence %+v", ch.ptr, ch.stream, ch.seq, f)
		}
	}
	// An event in two places would be recorded for both, or destroyed twice.
	seen := map[device.Event]bool{}
	for _, e := range heldEvents(o) {
		if seen[e] {
			return fmt.Errorf("event %d is held twice", e)
		}
		seen[e] = true
	}
	return nil
}

// heldEvents is every event the stream order holds.
func heldEvents(o *streamOrder) []device.Event {
	events := slices.Clone(o.spare)
	for _, f := range o.fences {
		if f.ok {
			events = append(events, f.ev)
		}
	}
	for _, ch := range o.waiting {
		events = append(events, ch.events...)
	}
	return events
}

// freeSet stands in for the free list under the stream order. It keeps
// every chunk apart, never merging, so that each keeps its own history.
type freeSet struct{ chunks []*chunk }

func (f *freeSet) insert(ch *chunk) {
	ch.state = chunkFree
	f.chunks = append(f.chunks, ch)
}

func (f *freeSet) unbind(s device.Stream, upto uint64) bool {
	found := false
	for _, ch := range f.chunks {
		if ch.bound && ch.stream == s && ch.seq <= upto {
			ch.bound, found = false, true
		}
	}
	return found
}

func (f *freeSet) anyBound() bool {
	return slices.ContainsFunc(f.chunks, func(ch *chunk) bool { return ch.bound })
}

// takeFor removes from chunks the first that stream s may use.
func takeFor(chunks *[]*chunk, s device.Stream) *chunk {
	i := slices.IndexFunc(*chunks, func(ch *chunk) bool { return ch.usableBy(s) })
	if i < 0 {
		return nil
	}
	ch := (*chunks)[i]
	*chunks = slices.Delete(*chunks, i, i+1)
	return ch
}

// pendingWork is work queued on a stream before a free: the memory may
// serve another stream only once the device has finished it.
type pendingWork struct {
	stream device.Stream
	tick   int
}

// FuzzStreamOrder drives the stream order alone, over a simulated device
// and a free list that never merges, through blocks used on one or more
// streams, frees, reuse from recent, the device finishing streams, polls,
// fences, settling and failed event records. After every step it checks checkStreamOrder's
// invariants and that every event the device holds is the stream order's;
// whenever memory is reused, that no other stream may still be using it.
func FuzzStreamOrder(f *testing.F) {
	f.Add([]byte{0, 0, 1, 3, 0, 0, 2, 7, 2, 6, 1, 7, 2, 5, 0, 2})
	f.Add([]byte{1, 0, 1, 0, 0, 3, 0, 1, 0, 2, 8, 3, 6, 0, 0, 2, 8, 0, 9, 2, 0, 1, 3, 5, 0})
	f.Add([]byte{2, 1, 2, 255, 0, 0, 3, 1, 4, 0, 5, 6, 2, 7, 1, 8, 1, 1, 8, 2, 0, 0, 6, 0, 6, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{data: data}
		ev := newEventSource(gib)
		var syncer DeviceSynchronizer
		if r.byte()%2 == 1 {
			syncer = &syncSource{eventSource: ev}
		}
		free := &freeSet{}
		o := newStreamOrder(ev, syncer, free)
		type lent struct {
			ch   *chunk
			s    device.Stream
			uses []device.Stream
		}
		var live []lent
		waits := map[*chunk][]pendingWork{}
		stream := func() device.Stream { return device.Stream(r.byte() % fuzzStreams) }
		for step := 0; r.more() && step < 400; step++ {
			switch op := r.byte() % 10; op {
			case 0, 1, 2:
				s, size := stream(), uint64(1+r.byte()%3)*granularity
				ch := o.reuse(size, s)
				if ch != nil && (ch.state != chunkLive || ch.bound || ch.size != size) {
					t.Fatalf("step %d: reuse(%d, %d) gave a chunk of %d bytes in state %d, bound %v", step, size, s, ch.size, ch.state, ch.bound)
				}
				if ch == nil {
					ch = takeFor(&free.chunks, s)
				}
				if ch == nil {
					ch = &chunk{size: size}
				}
				for _, w := range waits[ch] {
					if w.stream != s && ev.finished[w.stream] < w.tick {
						t.Fatalf("step %d: stream %d reuses memory that stream %d may still use", step, s, w.stream)
					}
				}
				ch.state, ch.bound = chunkLive, false
				ev.work(s)
				var uses []device.Stream
				for u := device.Stream(0); u < fuzzStreams; u++ {
					if u != s && r.byte()%4 == 0 {
						uses = append(uses, u)
						ev.work(u)
					}
				}
				live = append(live, lent{ch, s, uses})
			case 3, 4:
				if len(live) == 0 {
					break
				}
				i := int(r.byte()) % len(live)
				l := live[i]
				live = slices.Delete(live, i, i+1)
				w := []pendingWork{{l.s, ev.queued[l.s]}}
				for _, u := range l.uses {
					w = append(w, pendingWork{u, ev.queued[u]})
				}
				waits[l.ch] = w
				err := o.freed(l.ch, l.s, l.uses)
				want := chunkCached
				if err != nil {
					want = chunkHeld
				} else if len(l.uses) > 0 {
					want = chunkWaiting
				}
				if l.ch.state != want {
					t.Fatalf("step %d: a free used on %d other streams (error %v) left the chunk in state %d", step, len(l.uses), err, l.ch.state)
				}
			case 5:
				o.flush()
			case 6:
				ev.finish(stream())
			case 7:
				// A stream that finds no memory it may use.
				o.coverAll(stream(), true)
				o.poll()
			case 8:
				switch r.byte() % 4 {
				case 0:
					o.poll()
				case 1:
					// As the strategy's trim does: only for memory that is
					// free and bound, whose stream therefore has a fence.
					if len(free.chunks) > 0 {
						if ch := free.chunks[int(r.byte())%len(free.chunks)]; ch.bound {
							o.coverStream(ch.stream)
						}
					}
				case 2:
					o.synchronized()
				default:
					o.flush()
					err := o.settle()
					if syncer != nil && err == nil && (free.anyBound() || len(o.waiting) > 0) {
						t.Fatalf("step %d: settle with a synchronisable device left memory bound or waiting", step)
					}
				}
			case 9:
				ev.failRecord, ev.failRecordOn = errors.New("CUDA_ERROR_INVALID_HANDLE"), stream()
			}
			checkStreamOrderStep(t, step, o, ev, free)
		}

		// Once the device has finished and the caller synchronised,
		// everything freed is anyone's and no fence is kept.
		ev.failRecord = nil
		for _, l := range live {
			if err := o.freed(l.ch, l.s, l.uses); err != nil {
				t.Fatal(err)
			}
		}
		for s := device.Stream(0); s < fuzzStreams; s++ {
			ev.finish(s)
		}
		o.synchronized()
		checkStreamOrderStep(t, -1, o, ev, free)
		if free.anyBound() || len(o.recent) > 0 || len(o.waiting) > 0 || len(o.fences) > 0 {
			t.Fatalf("after the device finished: bound memory %v, %d chunks recent, %d waiting, %d fences", free.anyBound(), len(o.recent), len(o.waiting), len(o.fences))
		}
		if err := o.close(); err != nil {
			t.Fatal(err)
		}
		if n := ev.liveEvents(); n != 0 {
			t.Fatalf("%d events left after close", n)
		}
		checkSourceClean(t, ev.fakeSource)
	})
}

func checkStreamOrderStep(t *testing.T, step int, o *streamOrder, ev *eventSource, free *freeSet) {
	t.Helper()
	if err := checkStreamOrder(o, free.chunks); err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
	if held, n := len(heldEvents(o)), ev.liveEvents(); held != n {
		t.Fatalf("step %d: the device has %d events, the stream order holds %d", step, n, held)
	}
}
