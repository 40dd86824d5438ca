package pool

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/gluaproject/glua/device"
)

// fakeSource behaves like a device of fixed capacity that places each
// allocation first-fit in its address space, so it fragments as a real
// allocator can. It counts calls, can inject errors, and refuses (and
// remembers) frees of memory it did not hand out.
type fakeSource struct {
	mu       sync.Mutex
	base     uint64
	capacity uint64
	free     []span            // sorted by start, coalesced
	live     map[uint64]uint64 // start -> size asked for

	allocs, frees, memInfos int
	failAlloc               error // returned by the next Alloc when set
	failFree                error // returned by the next Free when set
	failMemInfo             error
	violations              []string
}

type span struct{ start, end uint64 }

// sourceAlign is the alignment the fake (like the driver) gives every
// allocation.
const sourceAlign = 256

func newFakeSource(capacity uint64) *fakeSource {
	const base = 1 << 40 // not 0, so that a zero Ptr is never valid memory
	return &fakeSource{
		base: base, capacity: capacity,
		free: []span{{base, base + capacity}},
		live: make(map[uint64]uint64),
	}
}

func (f *fakeSource) Alloc(nbytes uint64) (device.Ptr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.allocs++
	if err := f.failAlloc; err != nil {
		f.failAlloc = nil
		return 0, err
	}
	if nbytes == 0 {
		f.violations = append(f.violations, "Alloc of 0 bytes")
		return 0, errors.New("fake: Alloc of 0 bytes")
	}
	n := roundUp(nbytes, sourceAlign)
	for i, s := range f.free {
		if s.end-s.start < n {
			continue
		}
		ptr := s.start
		if s.end-s.start == n {
			f.free = append(f.free[:i], f.free[i+1:]...)
		} else {
			f.free[i].start += n
		}
		f.live[ptr] = nbytes
		return device.Ptr(ptr), nil
	}
	return 0, fmt.Errorf("fake: cannot place %d bytes: %w", nbytes, device.ErrOutOfMemory)
}

func (f *fakeSource) Free(p device.Ptr, nbytes uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frees++
	if err := f.failFree; err != nil {
		f.failFree = nil
		return err
	}
	size, ok := f.live[uint64(p)]
	if !ok {
		v := fmt.Sprintf("Free of %#x (%d bytes), which is not allocated", uint64(p), nbytes)
		f.violations = append(f.violations, v)
		return errors.New("fake: " + v)
	}
	if size != nbytes {
		v := fmt.Sprintf("Free of %#x with %d bytes; it was allocated with %d", uint64(p), nbytes, size)
		f.violations = append(f.violations, v)
		return errors.New("fake: " + v)
	}
	delete(f.live, uint64(p))
	start, end := uint64(p), uint64(p)+roundUp(size, sourceAlign)
	i := sort.Search(len(f.free), func(i int) bool { return f.free[i].start > start })
	f.free = append(f.free, span{})
	copy(f.free[i+1:], f.free[i:])
	f.free[i] = span{start, end}
	// Coalesce with the neighbours.
	if i+1 < len(f.free) && f.free[i].end == f.free[i+1].start {
		f.free[i].end = f.free[i+1].end
		f.free = append(f.free[:i+1], f.free[i+2:]...)
	}
	if i > 0 && f.free[i-1].end == f.free[i].start {
		f.free[i-1].end = f.free[i].end
		f.free = append(f.free[:i], f.free[i+1:]...)
	}
	return nil
}

func (f *fakeSource) MemInfo() (uint64, uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.memInfos++
	if f.failMemInfo != nil {
		return 0, 0, f.failMemInfo
	}
	return f.freeBytesLocked(), f.capacity, nil
}

func (f *fakeSource) freeBytesLocked() uint64 {
	var n uint64
	for _, s := range f.free {
		n += s.end - s.start
	}
	return n
}

// largestFree is the largest allocation the device could still place.
func (f *fakeSource) largestFree() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var m uint64
	for _, s := range f.free {
		m = max(m, s.end-s.start)
	}
	return m
}

// outstanding is the number of allocations not yet freed and their bytes.
func (f *fakeSource) outstanding() (n int, nbytes uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.live {
		nbytes += s
	}
	return len(f.live), nbytes
}

func (f *fakeSource) problems() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.violations...)
}

// eventSource adds streams and events to a fakeSource. Work is simulated:
// the test queues work on a stream (work) and finishes it (finish), as a GPU
// finishes queued work on its own time. An event is done once the work
// queued on its stream before it was recorded is finished; one recorded on
// an idle stream is done at once.
type eventSource struct {
	*fakeSource
	nextEvent device.Event
	events    map[device.Event]*fakeEvent
	// queued[s] counts the work ever queued on s, finished[s] the part of
	// it the device has done.
	queued, finished map[device.Stream]int
	records, polls   int
	// failRecord is returned by the next Record on stream failRecordOn.
	failRecord   error
	failRecordOn device.Stream
}

type fakeEvent struct {
	stream device.Stream
	tick   int // the stream's queued count when recorded
}

func newEventSource(capacity uint64) *eventSource {
	return &eventSource{
		fakeSource: newFakeSource(capacity),
		events:     make(map[device.Event]*fakeEvent),
		queued:     make(map[device.Stream]int),
		finished:   make(map[device.Stream]int),
	}
}

func (e *eventSource) NewEvent() (device.Event, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nextEvent++
	e.events[e.nextEvent] = &fakeEvent{}
	return e.nextEvent, nil
}

func (e *eventSource) DestroyEvent(ev device.Event) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.events[ev]
	if !ok {
		e.violations = append(e.violations, fmt.Sprintf("DestroyEvent of unknown event %d", ev))
		return errors.New("fake: unknown event")
	}
	delete(e.events, ev)
	return nil
}

func (e *eventSource) Record(ev device.Event, s device.Stream) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.records++
	if err := e.failRecord; err != nil && s == e.failRecordOn {
		e.failRecord = nil
		return err
	}
	fe, ok := e.events[ev]
	if !ok {
		e.violations = append(e.violations, fmt.Sprintf("Record of unknown event %d", ev))
		return errors.New("fake: unknown event")
	}
	fe.stream, fe.tick = s, e.queued[s]
	return nil
}

func (e *eventSource) EventDone(ev device.Event) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.polls++
	fe, ok := e.events[ev]
	if !ok {
		e.violations = append(e.violations, fmt.Sprintf("EventDone of unknown event %d", ev))
		return false, errors.New("fake: unknown event")
	}
	return e.finished[fe.stream] >= fe.tick, nil
}

// work queues work on s, as a kernel launched with a block would.
func (e *eventSource) work(s device.Stream) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.queued[s]++
}

// finish completes the work queued on s so far.
func (e *eventSource) finish(s device.Stream) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.finished[s] = e.queued[s]
}

func (e *eventSource) liveEvents() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.events)
}

// syncSource can also wait for the whole device.
type syncSource struct {
	*eventSource
	syncs int
}

func (s *syncSource) Synchronize() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncs++
	for st, n := range s.queued {
		s.finished[st] = n
	}
	return nil
}
