package runtime

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gluaproject/glua/device"
)

// streamSet holds the streams and events a runtime made, which live until
// its Close: a driver stream is cheap to keep, and destroying one while
// work is queued on it is a bug the driver does not report. Its own lock
// guards the lists, since a host may make streams and events while the
// runtime's goroutine synchronises them.
type streamSet struct {
	// own orders the runtime's work: the default stream when it has the
	// backend to itself, a stream of its own (also in streams) when the
	// backend is shared. Set by New, then only read.
	own     device.Stream
	mu      sync.Mutex
	streams []device.Stream
	events  []device.Event
	// timer is the pair of events Timer reuses, so that timing in a loop
	// creates no driver objects; they are also in events.
	timer [2]device.Event
}

// addStream keeps s for Close to destroy.
func (s *streamSet) addStream(h device.Stream) {
	s.mu.Lock()
	s.streams = append(s.streams, h)
	s.mu.Unlock()
}

// addEvent keeps e for Close to destroy.
func (s *streamSet) addEvent(e device.Event) {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
}

// all lists the streams made so far.
func (s *streamSet) all() []device.Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]device.Stream(nil), s.streams...)
}

// timerEvents is Timer's pair of events, made by b on first use.
func (s *streamSet) timerEvents(b interface {
	NewTimingEvent() (device.Event, error)
}) ([2]device.Event, error) {
	if s.timer[1] != 0 {
		return s.timer, nil
	}
	for i := range s.timer {
		e, err := b.NewTimingEvent()
		if err != nil {
			return s.timer, fmt.Errorf("timer: %w", err)
		}
		s.timer[i] = e
		s.addEvent(e)
	}
	return s.timer, nil
}

// Close destroys every event, then every stream, through b, and forgets
// them.
func (s *streamSet) Close(b interface {
	DestroyEvent(device.Event) error
	DestroyStream(device.Stream) error
}) error {
	s.mu.Lock()
	events, streams := s.events, s.streams
	s.events, s.streams, s.timer = nil, nil, [2]device.Event{}
	s.mu.Unlock()
	var errs []error
	for _, e := range events {
		if err := b.DestroyEvent(e); err != nil {
			errs = append(errs, err)
		}
	}
	for _, h := range streams {
		if err := b.DestroyStream(h); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
