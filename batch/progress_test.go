package batch

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// clock is a fake time that moves by step at each reading.
func clock(step time.Duration) func() time.Time {
	t := time.Unix(1000, 0)
	return func() time.Time { t = t.Add(step); return t }
}

func TestProgressLineSaysDoneTotalBytesRateAndETA(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(ProgressOn, &out, 4)
	p.now = clock(time.Second)
	for range 2 {
		p.step(1 << 30)
	}
	// The first step starts the clock; the second comes a second later.
	if got := out.String(); !strings.HasSuffix(got, "\rbatch 2/4  2.0 GiB  2.1 GB/s  ETA 1s") {
		t.Fatalf("line %q", got)
	}
	p.clear()
	if got := out.String(); !strings.HasSuffix(got, "\r"+strings.Repeat(" ", len("batch 2/4  2.0 GiB  2.1 GB/s  ETA 1s"))+"\r") {
		t.Fatalf("after clear %q", got)
	}
}

// Automatic progress stays quiet off a terminal and for short runs;
// ProgressOff always does.
func TestProgressOnlyWhenAskedOrLongOnATerminal(t *testing.T) {
	for _, mode := range []string{ProgressAuto, ProgressOff} {
		var out bytes.Buffer
		p := newProgress(mode, &out, 0)
		p.now = clock(time.Minute)
		for range 5 {
			p.step(1 << 20)
		}
		p.clear()
		if out.Len() != 0 {
			t.Fatalf("%q: drew %q", mode, out.String())
		}
	}
	var out bytes.Buffer
	p := newProgress(ProgressAuto, &out, 0)
	p.terminal = true // as on a terminal
	p.now = clock(500 * time.Millisecond)
	for range 3 {
		p.step(1 << 20)
	}
	if out.Len() != 0 {
		t.Fatalf("drew %q within the first two seconds", out.String())
	}
	for range 3 {
		p.step(1 << 20)
	}
	if !strings.Contains(out.String(), "batch 6  6.0 MiB") {
		t.Fatalf("after two seconds on a terminal: %q", out.String())
	}
}
