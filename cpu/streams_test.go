package cpu

import (
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/device"
)

func TestStreamsAreDistinctNonZeroAndUsable(t *testing.T) {
	b := newTestBackend(t)
	seen := map[device.Stream]bool{0: true}
	for i := 0; i < 10; i++ {
		s, err := b.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		if seen[s] {
			t.Fatalf("NewStream returned %d twice (or the default stream)", s)
		}
		seen[s] = true
		if err := b.StreamSynchronize(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.DestroyStream(0); err == nil {
		t.Fatal("destroying the default stream succeeded")
	}
}

func TestEventsAreDoneOnceRecordedAndTimeHostWork(t *testing.T) {
	b := newTestBackend(t)
	start, _ := b.NewTimingEvent()
	end, _ := b.NewTimingEvent()
	if start == 0 || start == end {
		t.Fatalf("NewTimingEvent returned %d and %d, want distinct non-zero handles", start, end)
	}
	if _, err := b.Elapsed(start, end); err == nil || !strings.Contains(err.Error(), "recorded") {
		t.Fatalf("Elapsed before Record = %v, want an error", err)
	}
	s, _ := b.NewStream()
	if err := b.Record(start, s); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := b.Record(end, s); err != nil {
		t.Fatal(err)
	}
	if done, err := b.EventDone(end); !done || err != nil {
		t.Fatalf("EventDone after Record = %t, %v", done, err)
	}
	if err := b.EventSynchronize(end); err != nil {
		t.Fatal(err)
	}
	sec, err := b.Elapsed(start, end)
	if err != nil || sec < 0.015 || sec > 5 {
		t.Fatalf("Elapsed across a 20ms sleep = %g s, %v", sec, err)
	}
	// An event made without timing orders and waits, but Elapsed
	// refuses it, as the driver does.
	plain, _ := b.NewEvent()
	if err := b.Record(plain, s); err != nil {
		t.Fatal(err)
	}
	if done, err := b.EventDone(plain); !done || err != nil {
		t.Fatalf("EventDone of an event without timing = %t, %v", done, err)
	}
	if _, err := b.Elapsed(start, plain); err == nil || !strings.Contains(err.Error(), "keep time") {
		t.Fatalf("Elapsed to an event without timing = %v, want an error", err)
	}
}

func TestDestroyedEventsAndStreamsAreRejected(t *testing.T) {
	b := newTestBackend(t)
	e, _ := b.NewEvent()
	s, _ := b.NewStream()
	if err := b.DestroyEvent(e); err != nil {
		t.Fatal(err)
	}
	if err := b.DestroyStream(s); err != nil {
		t.Fatal(err)
	}
	e2, _ := b.NewEvent()
	for name, err := range map[string]error{
		"record destroyed event":     b.Record(e, 0),
		"query destroyed event":      func() error { _, err := b.EventDone(e); return err }(),
		"synchronize destroyed":      b.EventSynchronize(e),
		"destroy event twice":        b.DestroyEvent(e),
		"record on destroyed stream": b.Record(e2, s),
		"destroy stream twice":       b.DestroyStream(s),
		"synchronize on destroyed":   b.StreamSynchronize(s),
	} {
		if err == nil {
			t.Errorf("%s succeeded", name)
		}
	}
}
