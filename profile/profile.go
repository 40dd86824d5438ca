// Package profile draws recorded memory events as one self-contained HTML
// page: live bytes by allocation site and reserved bytes over the run,
// with the soft and hard limits, the peak and every out-of-memory error
// marked; the pool's segments at the peak and at an out-of-memory error,
// as bars of used, cached and free memory; and a table of the sites that
// held the most.
//
// It is pure rendering. It takes plain data (Profile), imports nothing of
// glua's, and does not record: a runtime does, and converts what it
// recorded. The page loads nothing: its style, script and pictures (SVG)
// are inline, so it opens offline, from a file, on any machine.
package profile

import (
	"fmt"
	"io"
	"time"
)

// Profile is what the page draws.
type Profile struct {
	// Title names what ran (a script's name); Created is when the profile
	// was made; Device says where, e.g. "cpu backend: CPU (16 threads)";
	// Strategy is the pool's ("caching").
	Title    string
	Created  time.Time
	Device   string
	Strategy string
	// Duration is the length of the recording: the timeline's end.
	Duration time.Duration
	// Events are the allocations, frees, out-of-memory errors and changes
	// of reserved memory
	// in the order they happened. Arrays alive when recording began come
	// first, as allocations at time 0.
	Events []Event
	// Limits are the pool's limits from each Time on, oldest first; the
	// first applies from the start.
	Limits []Limits
	// Snapshots are the moments whose segments are drawn: the peak and the
	// last out-of-memory error, when there was one.
	Snapshots []Snapshot
}

// Kind is what an Event records.
type Kind uint8

const (
	// Alloc is an array allocated: NBytes at Site.
	Alloc Kind = iota + 1
	// Free is an array freed: NBytes, allocated at Site.
	Free
	// OOM is an allocation of NBytes at Site that failed: out of memory.
	OOM
	// Reserve is the pool's reserved bytes changing on their own: cached
	// memory given back to the device, or the figure when recording began.
	Reserve
)

func (k Kind) String() string {
	switch k {
	case Alloc:
		return "alloc"
	case Free:
		return "free"
	case OOM:
		return "out of memory"
	case Reserve:
		return "reserve"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Event is one thing that happened to memory.
type Event struct {
	// Time is since the recording began.
	Time time.Duration
	Kind Kind
	// Site is where the array was allocated (a source line), or for
	// memory HeldByRuntime what it is for ("cuBLAS workspace"); "" is
	// drawn as "(unknown)".
	Site string
	// Holder is HeldByArray or HeldByRuntime.
	Holder Holder
	// NBytes is the bytes the pool holds for the allocation, as a Piece
	// of a Snapshot covers them.
	NBytes uint64
	// Reserved is the bytes the pool held from the device after the event.
	Reserved uint64
}

// Holder is what holds a piece of the pool's memory.
type Holder uint8

const (
	// HeldByArray is an array, allocated at its Site.
	HeldByArray Holder = iota
	// HeldByRuntime is memory the runtime took from the pool for itself,
	// not for an array: a library's workspace (cuBLAS's), a kernel's
	// scratch. Its Site says what it is for; the events record it as they
	// record arrays, so the timeline shows it.
	HeldByRuntime
	// HeldElsewhere is live memory that no event records: in a pool shared
	// by several runtimes, what the others hold. Only a Snapshot's pieces
	// have it; the timeline cannot show it.
	HeldElsewhere
)

// Limits are the pool's soft and hard limits in bytes; 0 is none.
type Limits struct {
	Time       time.Duration
	Soft, Hard uint64
}

// The Names of Snapshots the page knows: it marks them on the timeline.
const (
	SnapshotPeak = "peak"
	SnapshotOOM  = "oom"
)

// Snapshot is the pool's segments at one moment.
type Snapshot struct {
	// Name is SnapshotPeak or SnapshotOOM; the page's picture of it has
	// the id "segments-" + Name.
	Name string
	Time time.Duration
	// Live is the bytes the recorded allocations held then, the
	// timeline's live memory: what the live pieces HeldByArray and
	// HeldByRuntime add up to.
	Live uint64
	// Requested and Site are, at an out-of-memory error, the allocation
	// that failed.
	Requested uint64
	Site      string
	// Soft and Hard are the limits then (0: none); DeviceFree and
	// DeviceTotal the device's own figures (0: unknown).
	Soft, Hard              uint64
	DeviceFree, DeviceTotal uint64
	Segments                []Segment
}

// Segment is one allocation the pool drew from the device, cut into
// pieces that tile it in address order.
type Segment struct {
	Address, Size uint64
	Pieces        []Piece
}

// Piece is part of a Segment: live memory, which Holder holds and Site
// names as the events do, or cached memory (Live false) that nothing
// holds.
type Piece struct {
	Offset, Size uint64
	Live         bool
	Site         string
	Holder       Holder
}

// reserved is the bytes the snapshot's segments hold.
func (s *Snapshot) reserved() uint64 {
	var n uint64
	for _, seg := range s.Segments {
		n += seg.Size
	}
	return n
}

// unreserved is what the pool could still draw: room under the hard limit
// and on the device, whichever is less of those known.
func (s *Snapshot) unreserved() uint64 {
	r := s.reserved()
	free := s.DeviceFree
	if s.Hard > 0 {
		room := s.Hard - min(s.Hard, r)
		if s.DeviceTotal == 0 || room < free {
			free = room
		}
	}
	return free
}

// Write writes the page for p to w.
func Write(w io.Writer, p *Profile) error {
	page, err := render(p)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, page)
	return err
}
