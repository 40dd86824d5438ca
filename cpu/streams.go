package cpu

import (
	"fmt"
	"time"

	"github.com/gluaproject/glua/device"
)

// event is a recorded point in time. Work on the CPU backend is finished
// when its call returns, so an event is complete as soon as it is recorded.
type event struct {
	recorded bool
	timing   bool // from NewTimingEvent: Elapsed accepts it, as the driver does
	at       time.Time
}

// checkStream accepts the default stream and any live stream; a destroyed or
// invented handle is an error, as the driver reports CUDA_ERROR_INVALID_HANDLE.
// b.mu must be held.
func (b *Backend) checkStream(op string, s device.Stream) error {
	if b.closed {
		return fmt.Errorf("%s: %w", op, errClosed)
	}
	if s == 0 {
		return nil
	}
	if _, ok := b.streams[s]; !ok {
		return fmt.Errorf("%s: stream %d is not a live stream", op, s)
	}
	return nil
}

// NewStream returns a new stream handle, never 0 and never reused.
func (b *Backend) NewStream() (device.Stream, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, fmt.Errorf("new stream: %w", errClosed)
	}
	s := b.nextStream
	b.nextStream++
	b.streams[s] = struct{}{}
	return s, nil
}

// DestroyStream forgets s. The default stream cannot be destroyed.
func (b *Backend) DestroyStream(s device.Stream) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s == 0 {
		return fmt.Errorf("destroy stream: the default stream cannot be destroyed")
	}
	if err := b.checkStream("destroy stream", s); err != nil {
		return err
	}
	delete(b.streams, s)
	delete(b.order.streams, s)
	delete(b.order.merged, s)
	return nil
}

// StreamSynchronize returns at once for any live stream.
func (b *Backend) StreamSynchronize(s device.Stream) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.checkStream("stream synchronize", s); err != nil {
		return err
	}
	b.hostWaitedStream(s)
	return nil
}

// NewEvent returns a new, unrecorded event handle, never 0 and never
// reused, that Elapsed refuses, as the driver refuses an event made
// without timing.
func (b *Backend) NewEvent() (device.Event, error) {
	return b.newEvent(false)
}

// NewTimingEvent is NewEvent for an event that Elapsed accepts.
func (b *Backend) NewTimingEvent() (device.Event, error) {
	return b.newEvent(true)
}

func (b *Backend) newEvent(timing bool) (device.Event, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, fmt.Errorf("new event: %w", errClosed)
	}
	e := b.nextEvent
	b.nextEvent++
	b.events[e] = &event{timing: timing}
	return e, nil
}

// lookupEvent returns the live event e. b.mu must be held.
func (b *Backend) lookupEvent(op string, e device.Event) (*event, error) {
	if b.closed {
		return nil, fmt.Errorf("%s: %w", op, errClosed)
	}
	ev, ok := b.events[e]
	if !ok {
		return nil, fmt.Errorf("%s: event %d is not a live event", op, e)
	}
	return ev, nil
}

// DestroyEvent forgets e.
func (b *Backend) DestroyEvent(e device.Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, err := b.lookupEvent("destroy event", e); err != nil {
		return err
	}
	delete(b.events, e)
	delete(b.order.events, e)
	return nil
}

// Record marks the present moment on s; everything before it is done.
func (b *Backend) Record(e device.Event, s device.Stream) error {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	ev, err := b.lookupEvent("record", e)
	if err != nil {
		return err
	}
	if err := b.checkStream("record", s); err != nil {
		return err
	}
	ev.recorded, ev.at = true, now
	b.recordOrder(e, s)
	return nil
}

// StreamWaitEvent has nothing to wait for: the CPU backend finishes each
// piece of work before the call that queued it returns. The handles are
// checked as the driver checks them.
func (b *Backend) StreamWaitEvent(s device.Stream, e device.Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, err := b.lookupEvent("stream wait event", e); err != nil {
		return err
	}
	if err := b.checkStream("stream wait event", s); err != nil {
		return err
	}
	b.waitOrder(s, e)
	return nil
}

// EventSynchronize returns at once for any live event. An event never
// recorded counts as complete, as cuEventSynchronize treats it.
func (b *Backend) EventSynchronize(e device.Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, err := b.lookupEvent("event synchronize", e); err != nil {
		return err
	}
	b.hostWaitedEvent(e)
	return nil
}

// EventDone is true for every live event, recorded or not (cuEventQuery
// returns CUDA_SUCCESS for an event with no work before it).
func (b *Backend) EventDone(e device.Event) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, err := b.lookupEvent("event query", e); err != nil {
		return false, err
	}
	b.hostWaitedEvent(e)
	return true, nil
}

// Elapsed is the host time in seconds between the Record calls of start and
// end. Both must have been recorded.
func (b *Backend) Elapsed(start, end device.Event) (float64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, err := b.lookupEvent("elapsed", start)
	if err != nil {
		return 0, err
	}
	e, err := b.lookupEvent("elapsed", end)
	if err != nil {
		return 0, err
	}
	if !s.timing || !e.timing {
		return 0, fmt.Errorf("elapsed: both events must keep time (start: %t, end: %t); NewEvent's do not", s.timing, e.timing)
	}
	if !s.recorded || !e.recorded {
		return 0, fmt.Errorf("elapsed: both events must be recorded first (start recorded: %t, end recorded: %t)", s.recorded, e.recorded)
	}
	return e.at.Sub(s.at).Seconds(), nil
}
