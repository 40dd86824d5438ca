package shutdowntest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gluaproject/glua/backend"
	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/cpu"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// recording is the CPU backend that logs what the runtime asks of it.
type recording struct {
	*cpu.Backend
	mu        sync.Mutex
	log       []string
	workspace func(nbytes uint64, s device.Stream) (device.Ptr, func(), error)
	releases  map[device.Stream]func()
	destroyed map[device.Stream]bool
}

var (
	openedMu sync.Mutex
	opened   *recording
)

func init() {
	backend.Register(backend.Driver{Name: "cuda", Device: "recording", Open: func(config.Config) (backend.Backend, error) {
		b, err := cpu.New(cpu.Config{Capacity: 256 << 20})
		if err != nil {
			return nil, err
		}
		r := &recording{Backend: b, releases: map[device.Stream]func(){}, destroyed: map[device.Stream]bool{}}
		openedMu.Lock()
		opened = r
		openedMu.Unlock()
		return r, nil
	}})
}

func (r *recording) note(format string, args ...any) {
	r.mu.Lock()
	r.log = append(r.log, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// use notes a call on stream s, and a use of a destroyed one as such.
func (r *recording) use(call string, s device.Stream) {
	r.mu.Lock()
	dead := r.destroyed[s]
	r.mu.Unlock()
	if dead {
		r.note("%s on destroyed stream %d", call, s)
	}
}

func (r *recording) SetWorkspaceAllocator(alloc func(uint64, device.Stream) (device.Ptr, func(), error)) {
	r.workspace = alloc
}

// Gemm gives its stream a workspace the first time, as the cuda backend's
// cuBLAS handle for the stream does.
func (r *recording) Gemm(g device.Gemm) error {
	r.mu.Lock()
	_, has := r.releases[g.Stream]
	r.mu.Unlock()
	if !has && r.workspace != nil {
		_, release, err := r.workspace(1<<20, g.Stream)
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.releases[g.Stream] = release
		r.mu.Unlock()
	}
	return r.Backend.Gemm(g)
}

func (r *recording) DestroyStream(s device.Stream) error {
	r.mu.Lock()
	release := r.releases[s]
	delete(r.releases, s)
	r.mu.Unlock()
	if release != nil {
		release()
		r.note("workspace released")
	}
	r.note("destroy stream")
	err := r.Backend.DestroyStream(s)
	r.mu.Lock()
	r.destroyed[s] = true
	r.mu.Unlock()
	return err
}

func (r *recording) Record(e device.Event, s device.Stream) error {
	r.use("record", s)
	return r.Backend.Record(e, s)
}

func (r *recording) StreamSynchronize(s device.Stream) error {
	r.use("stream synchronize", s)
	return r.Backend.StreamSynchronize(s)
}

func (r *recording) Synchronize() error { r.note("synchronize"); return r.Backend.Synchronize() }

func (r *recording) Free(p device.Ptr, nbytes uint64) error {
	r.note("free segment")
	return r.Backend.Free(p, nbytes)
}

// Close destroys the handles left, the default stream's among them, and
// with them their workspaces, as the cuda backend does.
func (r *recording) Close() error {
	r.mu.Lock()
	releases := r.releases
	r.releases = nil
	r.mu.Unlock()
	for range releases {
		r.note("workspace released")
	}
	for _, release := range releases {
		release()
	}
	r.note("close backend")
	return r.Backend.Close()
}

func (r *recording) entries() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

func options(o runtime.Options) runtime.Options {
	c := config.Default()
	o.Config = &c
	if o.Shared == nil {
		o.Backend = "cuda"
	}
	return o
}

// before fails unless log has a and b and every a comes before the first
// b.
func before(t *testing.T, log []string, a, b string) {
	t.Helper()
	lastA, firstB := -1, slices.Index(log, b)
	for i, e := range log {
		if e == a {
			lastA = i
		}
	}
	if lastA < 0 || firstB < 0 || lastA > firstB {
		t.Fatalf("want every %q before the first %q: %v", a, b, log)
	}
}

// checkLog fails if anything used a destroyed stream or the backend did
// anything after closing.
func checkLog(t *testing.T, log []string) {
	t.Helper()
	for _, e := range log {
		if strings.Contains(e, "destroyed stream") {
			t.Errorf("%s\nlog: %v", e, log)
		}
	}
	if len(log) == 0 || log[len(log)-1] != "close backend" {
		t.Fatalf("the backend did not close last: %v", log)
	}
}

// matmul runs a small product on rt's stream.
func matmul(t *testing.T, rt *runtime.Runtime) {
	t.Helper()
	var arrays [3]*runtime.Array
	for i := range arrays {
		a, err := rt.Full([]int{8, 8}, float64(i+1), runtime.Float32)
		if err != nil {
			t.Fatal(err)
		}
		arrays[i] = a
	}
	if err := rt.Matmul(arrays[0], arrays[1], arrays[2], runtime.MatmulOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A runtime of its own: queued work ends before anything is freed, its
// streams go before the backend, and the backend closes last.
func TestRuntimeClosesInOrder(t *testing.T) {
	rt, err := runtime.New(options(runtime.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	r := opened
	matmul(t, rt)
	if _, err := rt.NewStream(); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	log := r.entries()
	checkLog(t, log)
	if slices.Index(log, "synchronize") > slices.Index(log, "free segment") {
		t.Fatalf("memory returned before queued work ended: %v", log)
	}
	before(t, log, "destroy stream", "close backend")
	if _, err := rt.Zeros([]int{4}, runtime.Float32); !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// Runtimes on a Shared pool: each frees its arrays and workspaces into the
// shared pool while its streams exist (nothing is later recorded on a
// destroyed stream when another runtime looks for memory), the others go
// on, and the shared pool and backend close only after the last runtime.
func TestSharedClosesAfterItsRuntimes(t *testing.T) {
	sh, err := runtime.NewShared(options(runtime.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	r := opened
	var rts []*runtime.Runtime
	for range 2 {
		rt, err := runtime.New(options(runtime.Options{Shared: sh}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Zeros([]int{1 << 16}, runtime.Float32); err != nil {
			t.Fatal(err)
		}
		rts = append(rts, rt)
	}
	// Only the second has a cuBLAS workspace: the first's frees are
	// recorded on its stream by Close itself, before the stream goes.
	matmul(t, rts[1])
	if err := sh.Close(); !errors.Is(err, runtime.ErrSharedInUse) {
		t.Fatalf("Shared.Close with open runtimes: %v", err)
	}
	if err := rts[0].Close(); err != nil {
		t.Fatal(err)
	}
	// The other runtime allocates on its own stream, where the pool may
	// look for the first runtime's freed memory.
	if _, err := rts[1].Zeros([]int{1 << 18}, runtime.Float32); err != nil {
		t.Fatal(err)
	}
	if err := rts[1].Close(); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(r.entries(), "close backend") {
		t.Fatal("the shared backend closed with its Shared still open")
	}
	if err := sh.Close(); err != nil {
		t.Fatal(err)
	}
	log := r.entries()
	checkLog(t, log)
	before(t, log, "workspace released", "free segment")
	if st := sh.Stats(); st.Used != 0 {
		t.Fatalf("the shared pool still counts %d bytes in use", st.Used)
	}
}
