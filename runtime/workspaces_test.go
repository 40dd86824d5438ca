package runtime

import (
	"testing"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
	"github.com/gluaproject/glua/profile"
)

// A reduction on the GPU takes scratch from the pool, memory that is no
// array. A recording has it under what it is for, in the bytes the pool
// holds for it, and the peak's segments, drawn while it is live, add up
// to the timeline's live bytes with the scratch among them.
func TestReductionScratchIsRecordedAsTheRuntimesOwn(t *testing.T) {
	c := config.Default()
	rt, err := New(Options{Config: &c, Backend: "cpu", CPUMemory: "64MiB"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	x, err := rt.Zeros([]int{1 << 20}, Float32)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	if err := rt.RecordMemory(true); err != nil {
		t.Fatal(err)
	}
	// The GPU's executor: its reduce takes and gives back the scratch on
	// any backend, around a kernel that here does nothing.
	e := &deviceExec{rt: rt}
	n := 3<<20 + 1
	var scratch device.Ptr
	if _, err := e.reduce(n, func(p device.Ptr) (float64, error) { scratch = p; return 0, nil }); err != nil || scratch == 0 {
		t.Fatalf("reduce: %v, scratch %#x", err, scratch)
	}
	p, err := rt.MemoryProfile("scratch")
	if err != nil {
		t.Fatal(err)
	}
	var allocs, frees []profile.Event
	for _, ev := range p.Events {
		if ev.Site != "reduction scratch" {
			continue
		}
		if ev.Holder != profile.HeldByRuntime {
			t.Errorf("scratch event %+v is not the runtime's own", ev)
		}
		switch ev.Kind {
		case profile.Alloc:
			allocs = append(allocs, ev)
		case profile.Free:
			frees = append(frees, ev)
		}
	}
	want := kernels.ReduceScratchBytes(n)
	if len(allocs) != 1 || len(frees) != 1 || allocs[0].NBytes < want || allocs[0].NBytes != frees[0].NBytes {
		t.Fatalf("scratch allocations %+v and frees %+v; want one of each, of at least %d bytes", allocs, frees, want)
	}
	if len(p.Snapshots) != 1 {
		t.Fatalf("snapshots %+v; want the peak's", p.Snapshots)
	}
	peak := p.Snapshots[0]
	if wantLive := 4<<20 + allocs[0].NBytes; peak.Live != wantLive {
		t.Errorf("the peak's segments were drawn at %d bytes live; want %d, the array and the scratch", peak.Live, wantLive)
	}
	var live uint64
	var scratchPieces int
	for _, seg := range peak.Segments {
		for _, pc := range seg.Pieces {
			if !pc.Live {
				continue
			}
			live += pc.Size
			if pc.Site == "reduction scratch" {
				scratchPieces++
				if pc.Holder != profile.HeldByRuntime || pc.Size != allocs[0].NBytes {
					t.Errorf("the scratch's piece %+v; want the runtime's own, of %d bytes", pc, allocs[0].NBytes)
				}
			} else if pc.Holder != profile.HeldByArray {
				t.Errorf("piece %+v is not the array's", pc)
			}
		}
	}
	if live != peak.Live || scratchPieces != 1 {
		t.Errorf("the live pieces add up to %d bytes, %d of them scratch; the timeline has %d live", live, scratchPieces, peak.Live)
	}
}

// MatmulWorkspace is the workspace of the runtime's own stream, taken as
// the cuda backend takes it on the stream's first product, and none
// before or for another stream's.
func TestMatmulWorkspaceIsTheOwnStreams(t *testing.T) {
	c := config.Default()
	rt, err := New(Options{Config: &c, Backend: "cpu", CPUMemory: "64MiB"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if n := rt.MatmulWorkspace(); n != 0 {
		t.Fatalf("a new runtime holds a workspace of %d bytes", n)
	}
	take := workspaceFrom(rt.pool, func(device.Stream) *Runtime { return rt })
	s, err := rt.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	_, releaseOther, err := take(1<<20, s.handle)
	if err != nil {
		t.Fatal(err)
	}
	if n := rt.MatmulWorkspace(); n != 0 {
		t.Fatalf("another stream's workspace counts as the runtime's own: %d bytes", n)
	}
	_, release, err := take(2<<20, rt.streams.own)
	if err != nil {
		t.Fatal(err)
	}
	if n := rt.MatmulWorkspace(); n != 2<<20 {
		t.Fatalf("with the own stream's workspace taken: %d bytes, want %d", n, 2<<20)
	}
	release()
	releaseOther()
	if n := rt.MatmulWorkspace(); n != 0 {
		t.Fatalf("after the release: %d bytes", n)
	}
}
