package runtime

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gluaproject/glua/device"
)

// driverLog is a fake driver that numbers the events it makes and logs
// what it destroys.
type driverLog struct {
	made device.Event
	log  []string
}

func (d *driverLog) NewTimingEvent() (device.Event, error) {
	d.made++
	return d.made, nil
}

func (d *driverLog) DestroyEvent(e device.Event) error {
	d.log = append(d.log, fmt.Sprint("event ", e))
	return nil
}

func (d *driverLog) DestroyStream(s device.Stream) error {
	d.log = append(d.log, fmt.Sprint("stream ", s))
	return nil
}

// Timing in a loop makes its two events once; Close destroys every event
// and then every stream exactly once, however often it is called.
func TestStreamSetReusesTimerEventsAndDestroysEachObjectOnce(t *testing.T) {
	var d driverLog
	var s streamSet
	s.addStream(100)
	for range 3 {
		pair, err := s.timerEvents(&d)
		if err != nil {
			t.Fatal(err)
		}
		if pair != [2]device.Event{1, 2} {
			t.Fatalf("timer events %v, want the first two made, [1 2]", pair)
		}
	}
	s.addEvent(50)
	s.addStream(101)
	if got := s.all(); !slices.Equal(got, []device.Stream{100, 101}) {
		t.Fatalf("streams %v, want [100 101]", got)
	}
	if err := s.Close(&d); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(&d); err != nil {
		t.Fatal(err)
	}
	want := []string{"event 1", "event 2", "event 50", "stream 100", "stream 101"}
	if !slices.Equal(d.log, want) {
		t.Fatalf("destroyed %q, want %q", d.log, want)
	}
}
