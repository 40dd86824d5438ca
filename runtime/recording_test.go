package runtime_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gluaproject/glua/profile"
	"github.com/gluaproject/glua/runtime"
)

// countKinds counts the events of each kind at each site.
func countKinds(p *profile.Profile) map[string]int {
	n := map[string]int{}
	for _, e := range p.Events {
		n[e.Kind.String()+" "+e.Site]++
	}
	return n
}

// A recording has every allocation and free with its site, the arrays
// alive when it began, the reserved bytes after each event, and the
// segments at the peak with each live piece named by its site.
func TestRecordingHasEveryEventWithItsSiteAndThePeak(t *testing.T) {
	rt := newCPU(t, runtime.Options{HardLimit: "64MiB"})
	before, err := rt.Zeros([]int{1 << 18}, runtime.Float32) // 1 MiB from Go, before recording
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.RecordMemory(true); err != nil {
		t.Fatal(err)
	}
	err = rt.DoString(`local cuda = require("cuda")
		keep = {}
		for i = 1, 4 do keep[i] = cuda.zeros({1024, 1024}) end
		for i = 1, 3 do cuda.zeros({256, 1024}):free() end
		keep[1]:free()`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.MemoryProfile("")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"reserve ": 1, "alloc (allocated from Go)": 1,
		"alloc <string>:3": 4, "alloc <string>:4": 3, "free <string>:4": 3, "free <string>:3": 1,
	}
	got := countKinds(p)
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%d events %q; want %d (all: %v)", got[k], k, n, got)
		}
	}
	if len(p.Events) != 13 {
		t.Errorf("%d events; want 13: %v", len(p.Events), got)
	}
	for i, e := range p.Events {
		if e.Reserved < 1<<20 || e.Reserved > 64<<20 || (i > 0 && e.Time < p.Events[i-1].Time) {
			t.Fatalf("event %d %+v: reserved outside the pool's bounds or time going back", i, e)
		}
	}
	if p.Device == "" || !strings.HasPrefix(p.Device, "cpu backend") || p.Strategy != "caching" || len(p.Limits) != 1 || p.Limits[0].Hard != 64<<20 {
		t.Errorf("profile header: device %q, strategy %q, limits %+v", p.Device, p.Strategy, p.Limits)
	}
	if len(p.Snapshots) != 1 || p.Snapshots[0].Name != profile.SnapshotPeak {
		t.Fatalf("snapshots %+v; want the peak's", p.Snapshots)
	}
	peak := p.Snapshots[0]
	if peak.Live != 18<<20 {
		t.Errorf("the peak's snapshot was taken with %d bytes live; want 18 MiB (Go's 1, four of 4, one of 1)", peak.Live)
	}
	bySite := map[string]uint64{}
	for _, seg := range peak.Segments {
		for _, pc := range seg.Pieces {
			if pc.Live {
				bySite[pc.Site] += pc.Size
			}
		}
	}
	if bySite["<string>:3"] != 16<<20 || bySite["<string>:4"] != 1<<20 || bySite["(allocated from Go)"] != 1<<20 {
		t.Errorf("live pieces at the peak by site: %v", bySite)
	}
	if before.IsFreed() {
		t.Fatal("recording freed an array")
	}
}

// Stopping keeps the recording; starting again begins a new one.
func TestRecordingStopsAndStartsAnew(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	rt.RecordMemory(true)
	if err := rt.DoString(`a = require("cuda").zeros(1024)`); err != nil {
		t.Fatal(err)
	}
	rt.RecordMemory(false)
	if err := rt.DoString(`b = require("cuda").zeros(1024)`); err != nil {
		t.Fatal(err)
	}
	p, err := rt.MemoryProfile("t")
	if err != nil {
		t.Fatal(err)
	}
	if n := countKinds(p)["alloc <string>:1"]; n != 1 {
		t.Fatalf("%d allocations recorded; want only the one made while recording", n)
	}
	rt.RecordMemory(true)
	p, _ = rt.MemoryProfile("t")
	if n := countKinds(p)["alloc <string>:1"]; n != 2 || p.Events[len(p.Events)-1].Time != 0 {
		t.Fatalf("a new recording should begin with the 2 live arrays at time 0: %v", countKinds(p))
	}
}

// An out-of-memory error is an event at the failing line, with the pool's
// segments and the size asked for.
func TestRecordingMarksOutOfMemoryWithTheSegments(t *testing.T) {
	rt := newCPU(t, runtime.Options{HardLimit: "16MiB"})
	rt.RecordMemory(true)
	err := rt.DoString(`local cuda = require("cuda")
		keep = { cuda.zeros({1024, 1024}), cuda.zeros({1024, 1024}) }
		assert(not pcall(cuda.zeros, {3, 1024, 1024}))`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.MemoryProfile("")
	if err != nil {
		t.Fatal(err)
	}
	if n := countKinds(p)["out of memory <string>:3"]; n != 1 {
		t.Fatalf("OOM events %v; want one at <string>:3", countKinds(p))
	}
	var oom *profile.Snapshot
	for i := range p.Snapshots {
		if p.Snapshots[i].Name == profile.SnapshotOOM {
			oom = &p.Snapshots[i]
		}
	}
	if oom == nil || oom.Requested != 12<<20 || oom.Site != "<string>:3" || oom.Hard != 16<<20 || len(oom.Segments) == 0 {
		t.Fatalf("OOM snapshot %+v; want 12 MiB asked at <string>:3 under 16 MiB, with segments", oom)
	}
}

// A profile is written only of a recording, and to a file that can be
// written; both errors say so, and neither leaves a file.
func TestDumpProfileNeedsARecordingAndAWritablePath(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	dir := t.TempDir()
	path := filepath.Join(dir, "mem.html")
	if err := rt.DumpProfile(path, "x"); !errors.Is(err, runtime.ErrNotRecorded) {
		t.Fatalf("DumpProfile before recording = %v; want ErrNotRecorded", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("DumpProfile without a recording left a file")
	}
	rt.RecordMemory(true)
	if err := rt.DoString(`x = require("cuda").zeros(1024)`); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "no-such-dir", "mem.html")
	if err := rt.DumpProfile(bad, "x"); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("DumpProfile to %s = %v; want an error naming the path", bad, err)
	}
	if err := rt.DumpProfile(path, "job.lua"); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(page), "<title>Memory profile: job.lua</title>") || !strings.Contains(string(page), `id="timeline"`) {
		t.Fatalf("the profile written (%v) lacks its title or timeline", err)
	}
}

// A long loop's events are all kept, in order.
func TestRecordingKeepsEveryEventOfALongLoop(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	rt.RecordMemory(true)
	if err := rt.DoString(`local cuda = require("cuda"); for i = 1, 10000 do cuda.zeros(16):free() end`); err != nil {
		t.Fatal(err)
	}
	p, err := rt.MemoryProfile("")
	if err != nil {
		t.Fatal(err)
	}
	got := countKinds(p)
	if len(p.Events) != 20001 || got["alloc <string>:1"] != 10000 || got["free <string>:1"] != 10000 {
		t.Fatalf("%d events %v; want the first and 10,000 allocations and frees", len(p.Events), got)
	}
	for i := 1; i < len(p.Events); i++ {
		if p.Events[i].Time < p.Events[i-1].Time || (i%2 == 1) != (p.Events[i].Kind == profile.Alloc) {
			t.Fatalf("event %d %+v out of order", i, p.Events[i])
		}
	}
}
