package pool

import (
	"fmt"
	"slices"

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
