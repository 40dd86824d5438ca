package runtime

import (
	"errors"

	"github.com/gluaproject/glua/device"
)

// Stream is a queue of device work. Streams live until the runtime closes:
// a driver stream is cheap to keep and destroying one while work is queued
// on it is a bug the driver does not report.
type Stream struct {
	rt     *Runtime
	handle device.Stream
}

// Event marks a point in a stream, for waiting and, if NewEvent made it,
// for timing.
type Event struct {
	rt       *Runtime
	handle   device.Event
	recorded bool
	timing   bool
}

// NewStream creates a stream.
func (rt *Runtime) NewStream() (*Stream, error) {
	return rt.newStream(rt.backend.NewStream)
}

// priorityStreams is a backend whose streams can have priorities
// (cuda.Backend.NewPriorityStream).
type priorityStreams interface {
	NewPriorityStream() (device.Stream, error)
}

// newPriorityStream is a stream whose work the device starts ahead of
// other streams' pending work, where the backend has priorities: the
// asynchronous collectives' stream, whose blocks would otherwise wait for
// the last wave of the product queued beside them.
func (rt *Runtime) newPriorityStream() (*Stream, error) {
	if p, ok := rt.backend.(priorityStreams); ok {
		return rt.newStream(p.NewPriorityStream)
	}
	return rt.NewStream()
}

func (rt *Runtime) newStream(create func() (device.Stream, error)) (*Stream, error) {
	if err := rt.usable(); err != nil {
		return nil, err
	}
	h, err := create()
	if err != nil {
		return nil, err
	}
	rt.streams.addStream(h)
	return &Stream{rt: rt, handle: h}, nil
}

// Synchronize waits for the stream's queued work.
func (s *Stream) Synchronize() error {
	if err := s.rt.uncapturable("synchronizing"); err != nil {
		return err
	}
	return s.rt.backend.StreamSynchronize(s.handle)
}

// NewEvent creates an event for waiting and for timing.
func (rt *Runtime) NewEvent() (*Event, error) {
	return rt.newEvent(true)
}

// NewSyncEvent creates an event for ordering work and waiting on it only,
// which the driver records faster; Since refuses it. The runtime's own
// copies and iterators use these.
func (rt *Runtime) NewSyncEvent() (*Event, error) {
	return rt.newEvent(false)
}

func (rt *Runtime) newEvent(timing bool) (*Event, error) {
	if err := rt.usable(); err != nil {
		return nil, err
	}
	make := rt.backend.NewEvent
	if timing {
		make = rt.backend.NewTimingEvent
	}
	h, err := make()
	if err != nil {
		return nil, err
	}
	rt.streams.addEvent(h)
	return &Event{rt: rt, handle: h, timing: timing}, nil
}

// Record marks the current end of stream s (nil: the runtime's stream).
func (e *Event) Record(s *Stream) error {
	h := e.rt.streams.own
	if s != nil {
		if s.rt != e.rt {
			return errors.New("the stream belongs to another runtime")
		}
		h = s.handle
	}
	if err := e.rt.backend.Record(e.handle, h); err != nil {
		return err
	}
	e.recorded = true
	return nil
}

// Synchronize waits until the work before the event is done.
func (e *Event) Synchronize() error {
	if !e.recorded {
		return errors.New("the event was never recorded")
	}
	if err := e.rt.uncapturable("synchronizing"); err != nil {
		return err
	}
	return e.rt.backend.EventSynchronize(e.handle)
}

// Done reports whether the work before the event has finished.
func (e *Event) Done() (bool, error) {
	if !e.recorded {
		return false, errors.New("the event was never recorded")
	}
	return e.rt.backend.EventDone(e.handle)
}

// Since is the device time in seconds from start to e; both must have been
// recorded and e must be complete or is waited for.
func (e *Event) Since(start *Event) (float64, error) {
	if !e.timing || !start.timing {
		return 0, errors.New("both events must keep time: NewSyncEvent's do not")
	}
	if !e.recorded || !start.recorded {
		return 0, errors.New("both events must be recorded first")
	}
	if err := e.Synchronize(); err != nil {
		return 0, err
	}
	return e.rt.backend.Elapsed(start.handle, e.handle)
}

// Timer runs fn and returns the device time its queued work took, in
// seconds, measured with events on the runtime's stream.
func (rt *Runtime) Timer(fn func() error) (float64, error) {
	if err := rt.usable(); err != nil {
		return 0, err
	}
	if fn == nil {
		return 0, badGoArgument("Timer", "fn is nil")
	}
	if err := rt.uncapturable("timing"); err != nil {
		return 0, err
	}
	start, err := rt.streams.timerEvents(rt.backend)
	if err != nil {
		return 0, err
	}
	if err := rt.backend.Record(start[0], rt.streams.own); err != nil {
		return 0, err
	}
	if err := fn(); err != nil {
		return 0, err
	}
	if err := rt.backend.Record(start[1], rt.streams.own); err != nil {
		return 0, err
	}
	if err := rt.backend.EventSynchronize(start[1]); err != nil {
		return 0, err
	}
	return rt.backend.Elapsed(start[0], start[1])
}
