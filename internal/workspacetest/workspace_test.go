package workspacetest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gluaproject/glua/backend"
	_ "github.com/gluaproject/glua/bindings"
	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/cpu"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/profile"
	"github.com/gluaproject/glua/runtime"
)

// workspaceBytes is the stand-in's workspace: 3 MiB and a little, which
// the pool rounds up, so that a profile counting the bytes asked for
// rather than those the pool holds would not add up.
const workspaceBytes = 3<<20 + 100

// gpu is the CPU backend with a workspace per stream, as the cuda
// backend's cuBLAS handles have.
type gpu struct {
	*cpu.Backend
	mu        sync.Mutex
	workspace func(nbytes uint64, s device.Stream) (device.Ptr, func(), error)
	releases  map[device.Stream]func()
}

func init() {
	backend.Register(backend.Driver{Name: "cuda", Device: "stand-in", Open: func(config.Config) (backend.Backend, error) {
		b, err := cpu.New(cpu.Config{Capacity: 256 << 20})
		if err != nil {
			return nil, err
		}
		return &gpu{Backend: b, releases: map[device.Stream]func(){}}, nil
	}})
}

func (g *gpu) SetWorkspaceAllocator(alloc func(uint64, device.Stream) (device.Ptr, func(), error)) {
	g.mu.Lock()
	g.workspace = alloc
	g.mu.Unlock()
}

// Gemm gives its stream a workspace the first time.
func (g *gpu) Gemm(m device.Gemm) error {
	g.mu.Lock()
	_, has := g.releases[m.Stream]
	alloc := g.workspace
	g.mu.Unlock()
	if !has && alloc != nil {
		_, release, err := alloc(workspaceBytes, m.Stream)
		if err != nil {
			return err
		}
		g.mu.Lock()
		g.releases[m.Stream] = release
		g.mu.Unlock()
	}
	return g.Backend.Gemm(m)
}

// release gives back the workspace of stream s, if it has one.
func (g *gpu) release(s device.Stream) {
	g.mu.Lock()
	release := g.releases[s]
	delete(g.releases, s)
	g.mu.Unlock()
	if release != nil {
		release()
	}
}

func (g *gpu) DestroyStream(s device.Stream) error {
	g.release(s)
	return g.Backend.DestroyStream(s)
}

// Close gives back the workspaces left, the default stream's among them.
func (g *gpu) Close() error {
	g.mu.Lock()
	var streams []device.Stream
	for s := range g.releases {
		streams = append(streams, s)
	}
	g.mu.Unlock()
	for _, s := range streams {
		g.release(s)
	}
	return g.Backend.Close()
}

func options(o runtime.Options) runtime.Options {
	c := config.Default()
	o.Config = &c
	if o.Shared == nil {
		o.Backend = "cuda"
	}
	return o
}

func newRuntime(t *testing.T, o runtime.Options) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.New(options(o))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// peakOf replays the events as the timeline does: its highest live bytes.
func peakOf(events []profile.Event) uint64 {
	var live, peak uint64
	for _, e := range events {
		switch e.Kind {
		case profile.Alloc:
			live += e.NBytes
			peak = max(peak, live)
		case profile.Free:
			live -= e.NBytes
		}
	}
	return peak
}

// livePieces adds up a snapshot's live pieces by what holds them.
func livePieces(snap profile.Snapshot) map[profile.Holder]uint64 {
	held := map[profile.Holder]uint64{}
	for _, seg := range snap.Segments {
		for _, pc := range seg.Pieces {
			if pc.Live {
				held[pc.Holder] += pc.Size
			}
		}
	}
	return held
}

// piecesAt lists the live pieces named site.
func piecesAt(snap profile.Snapshot, site string) []profile.Piece {
	var out []profile.Piece
	for _, seg := range snap.Segments {
		for _, pc := range seg.Pieces {
			if pc.Live && pc.Site == site {
				out = append(out, pc)
			}
		}
	}
	return out
}

// eventsAt lists the events of kind at site.
func eventsAt(p *profile.Profile, kind profile.Kind, site string) []profile.Event {
	var out []profile.Event
	for _, e := range p.Events {
		if e.Kind == kind && e.Site == site {
			out = append(out, e)
		}
	}
	return out
}

func peakSnapshot(t *testing.T, p *profile.Profile) profile.Snapshot {
	t.Helper()
	for _, s := range p.Snapshots {
		if s.Name == profile.SnapshotPeak {
			return s
		}
	}
	t.Fatalf("no snapshot of the peak: %+v", p.Snapshots)
	return profile.Snapshot{}
}

// page renders p, into GLUA_ARTIFACTS too when it names a directory.
func page(t *testing.T, p *profile.Profile) string {
	t.Helper()
	var buf bytes.Buffer
	if err := profile.Write(&buf, p); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("GLUA_ARTIFACTS"); dir != "" {
		path := filepath.Join(dir, "workspace-"+t.Name()+".html")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("page written to %s", path)
	}
	return buf.String()
}

// The H100's page drew a 32 MiB cuBLAS workspace among the peak's
// segments, which no event recorded: "128 MiB live" over "used 160 MiB".
// Every byte the segments show as used is now in the timeline: the
// workspace is recorded when the first product on the stream takes it,
// as the runtime's own memory under what it is for rather than the Lua
// line that happened to need it, and in the bytes the pool holds for it.
func TestProfileTimelineHasEveryByteTheSegmentsShowAsUsed(t *testing.T) {
	rt := newRuntime(t, runtime.Options{})
	if err := rt.RecordMemory(true); err != nil {
		t.Fatal(err)
	}
	err := rt.DoString(`local cuda, kernels = require("cuda"), require("kernels")
		local A, B, C = cuda.rand({256, 256}), cuda.rand({256, 256}), cuda.zeros({256, 256})
		kernels.matmul(C, A, B)
		A:free() B:free() C:free()
		local keep = {}
		for i = 1, 4 do keep[i] = cuda.zeros({1024, 1024}) end
		keep[1]:free()`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.MemoryProfile("matmul")
	if err != nil {
		t.Fatal(err)
	}
	ws := eventsAt(p, profile.Alloc, "cuBLAS workspace")
	if len(ws) != 1 || ws[0].Holder != profile.HeldByRuntime || ws[0].NBytes < workspaceBytes || ws[0].NBytes%512 != 0 {
		t.Fatalf("workspace allocations %+v; want one of the runtime's own, of the bytes the pool holds", ws)
	}
	if n := len(eventsAt(p, profile.Alloc, "<string>:3")); n != 0 {
		t.Errorf("%d allocations at the matmul's line; the workspace is not the line's", n)
	}
	peak := peakSnapshot(t, p)
	held := livePieces(peak)
	if peak.Live != peakOf(p.Events) {
		t.Errorf("the segments were drawn at %d bytes live; the timeline's peak is %d", peak.Live, peakOf(p.Events))
	}
	if used := held[profile.HeldByArray] + held[profile.HeldByRuntime]; used != peak.Live || held[profile.HeldElsewhere] != 0 {
		t.Errorf("the peak's live pieces: %v; want arrays and the runtime's own adding up to the %d live in the timeline, and nothing else", held, peak.Live)
	}
	if pcs := piecesAt(peak, "cuBLAS workspace"); len(pcs) != 1 || pcs[0].Holder != profile.HeldByRuntime || pcs[0].Size != ws[0].NBytes {
		t.Errorf("the workspace's pieces at the peak %+v; want one, the runtime's own, of %d bytes", pcs, ws[0].NBytes)
	}
	if held[profile.HeldByRuntime] != ws[0].NBytes || held[profile.HeldByArray] != 4<<20*4 {
		t.Errorf("the peak's live pieces: %v; want the workspace and four 4 MiB arrays", held)
	}
	text := page(t, p)
	for _, want := range []string{"by the runtime itself, not arrays (cuBLAS workspace)", `<td class="site">cuBLAS workspace</td>`} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"The timeline has", "held elsewhere"} {
		if strings.Contains(text, bad) {
			t.Errorf("the page says %q: the segments and the timeline disagree", bad)
		}
	}
}

// A recording begun after the workspace was taken starts with it, as it
// starts with the live arrays.
func TestRecordingBegunLaterStartsWithTheWorkspace(t *testing.T) {
	rt := newRuntime(t, runtime.Options{})
	var arrays [3]*runtime.Array
	for i := range arrays {
		a, err := rt.Full([]int{64, 64}, 1, runtime.Float32)
		if err != nil {
			t.Fatal(err)
		}
		arrays[i] = a
	}
	if err := rt.Matmul(arrays[0], arrays[1], arrays[2], runtime.MatmulOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rt.RecordMemory(true); err != nil {
		t.Fatal(err)
	}
	p, err := rt.MemoryProfile("later")
	if err != nil {
		t.Fatal(err)
	}
	ws := eventsAt(p, profile.Alloc, "cuBLAS workspace")
	if len(ws) != 1 || ws[0].Time != 0 || ws[0].Holder != profile.HeldByRuntime {
		t.Fatalf("workspace allocations %+v; want one at time 0", ws)
	}
	peak := peakSnapshot(t, p)
	held := livePieces(peak)
	if held[profile.HeldByArray]+held[profile.HeldByRuntime] != peak.Live || held[profile.HeldElsewhere] != 0 || held[profile.HeldByRuntime] != ws[0].NBytes {
		t.Fatalf("live pieces %v at %d bytes live; want the three arrays and the workspace, adding up", held, peak.Live)
	}
}

// A workspace the pool cannot give is an out-of-memory error of the
// workspace, not of the Lua line whose product needed it.
func TestWorkspaceThatDoesNotFitIsTheWorkspacesOOM(t *testing.T) {
	rt := newRuntime(t, runtime.Options{HardLimit: "3MiB"})
	if err := rt.RecordMemory(true); err != nil {
		t.Fatal(err)
	}
	err := rt.DoString(`local cuda, kernels = require("cuda"), require("kernels")
		local A, B, C = cuda.zeros({64, 64}), cuda.zeros({64, 64}), cuda.zeros({64, 64})
		kernels.matmul(C, A, B)`)
	if err == nil || !strings.Contains(err.Error(), "cuBLAS workspace") {
		t.Fatalf("a workspace over the hard limit: %v", err)
	}
	p, err := rt.MemoryProfile("oom")
	if err != nil {
		t.Fatal(err)
	}
	ooms := eventsAt(p, profile.OOM, "cuBLAS workspace")
	if len(ooms) != 1 || ooms[0].NBytes != workspaceBytes || ooms[0].Holder != profile.HeldByRuntime {
		t.Fatalf("out-of-memory events %+v; want the workspace's", ooms)
	}
	for _, s := range p.Snapshots {
		if s.Name == profile.SnapshotOOM && (s.Site != "cuBLAS workspace" || s.Requested != workspaceBytes) {
			t.Fatalf("the OOM's snapshot names %q asking for %d", s.Site, s.Requested)
		}
	}
}

// In a shared pool, a runtime's profile has its own arrays and the
// workspace of its own stream; what the other runtimes hold is drawn as
// held elsewhere, and the pieces the timeline accounts for still add up
// to its live bytes.
func TestSharedPoolOthersMemoryIsHeldElsewhere(t *testing.T) {
	sh, err := runtime.NewShared(options(runtime.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	var rts [2]*runtime.Runtime
	for i := range rts {
		rt, err := runtime.New(options(runtime.Options{Shared: sh}))
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		rts[i] = rt
	}
	product := func(rt *runtime.Runtime, n int) {
		t.Helper()
		var arrays [3]*runtime.Array
		for i := range arrays {
			a, err := rt.Full([]int{n, n}, 1, runtime.Float32)
			if err != nil {
				t.Fatal(err)
			}
			arrays[i] = a
		}
		if err := rt.Matmul(arrays[0], arrays[1], arrays[2], runtime.MatmulOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	product(rts[1], 512) // three 1 MiB arrays and a workspace, the other runtime's
	rt := rts[0]
	if err := rt.RecordMemory(true); err != nil {
		t.Fatal(err)
	}
	product(rt, 1024) // three 4 MiB arrays and a workspace of its own
	p, err := rt.MemoryProfile("shared")
	if err != nil {
		t.Fatal(err)
	}
	if ws := eventsAt(p, profile.Alloc, "cuBLAS workspace"); len(ws) != 1 {
		t.Fatalf("workspace allocations %+v; want its own stream's only", ws)
	}
	peak := peakSnapshot(t, p)
	held := livePieces(peak)
	if held[profile.HeldByArray] != 3*4<<20 || held[profile.HeldByArray]+held[profile.HeldByRuntime] != peak.Live {
		t.Errorf("its live pieces %v at %d bytes live; want its three arrays and its workspace, adding up", held, peak.Live)
	}
	others := piecesAt(peak, "other runtimes sharing the pool")
	var elsewhere uint64
	for _, pc := range others {
		if pc.Holder != profile.HeldElsewhere {
			t.Errorf("the other runtime's piece %+v is not held elsewhere", pc)
		}
		elsewhere += pc.Size
	}
	if elsewhere != held[profile.HeldElsewhere] || elsewhere < 3<<20+workspaceBytes {
		t.Errorf("%d bytes of the other runtime's; want its three arrays and its workspace", elsewhere)
	}
	if text := page(t, p); !strings.Contains(text, "held elsewhere, which the timeline does not show (other runtimes sharing the pool)") {
		t.Error("the page does not say the other runtime's memory is not in the timeline")
	}
}

// The workspace is device memory the pool accounts for, but not an array:
// pool.stats().live_arrays counts the script's arrays only, and
// pool.status() names the workspace beside them.
func TestWorkspaceIsNotCountedAsAnArray(t *testing.T) {
	rt := newRuntime(t, runtime.Options{})
	err := rt.DoString(`
		local cuda, kernels, pool = require("cuda"), require("kernels"), require("pool")
		local before = pool.stats().live_arrays
		local A, B, C = cuda.rand({8, 8}), cuda.rand({8, 8}), cuda.zeros({8, 8})
		kernels.matmul(C, A, B)
		assert(pool.stats().live_arrays == before + 3, "live arrays " .. pool.stats().live_arrays .. ", want " .. before + 3)
		status = pool.status()`)
	if err != nil {
		t.Fatal(err)
	}
	status := rt.Lua().GetGlobal("status").String()
	if !strings.Contains(status, " arrays and a 3.0 MiB cuBLAS workspace (") {
		t.Fatalf("pool.status() does not name the workspace:\n%s", status)
	}
}
