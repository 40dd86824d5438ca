package runtime

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/pool"
)

// Runtime is one glua instance: a configuration, a backend, a memory pool and
// a Lua state. A Runtime is used from one goroutine at a time (the Lua state
// is not safe for concurrent use); several Runtimes may run at once on
// different goroutines and never see each other's arrays. Each has a
// backend and a pool of its own, or shares one with others (Shared), each
// then with its own quota.
type Runtime struct {
	cfg         config.Config
	backend     Backend
	backendNote string // why this backend was chosen, for --info
	exec        executor
	// pool is the runtime's own pool, or its quota of shared.pool.
	pool   pool.Allocator
	shared *Shared // nil: the backend and the pool are this runtime's
	// streams are the stream that orders the runtime's work and the
	// streams and events it made, destroyed by Close (streamset.go).
	streams streamSet
	L       *lua.LState
	// script is the rest of the runtime's Lua side: print's writer, the
	// sandbox, the Lua memory limit, the entry gate (script.go).
	script scriptPart

	// kernels are kernels.map's translations and the count of the
	// temporaries partial overlaps took (kernelpart.go).
	kernels kernelPart

	// graphs is graph capture and replay (graphpart.go); part of it is
	// guarded by mu, part only touched by the runtime's goroutine.
	graphs graphPart

	// mu guards what the GC's cleanup goroutine or a Close from another
	// goroutine can reach, across several parts: mem's lists, graphs' live
	// list and queue, xfer's pinned map, its queue and the stagers, comms,
	// and each buffer's freed; it stays here for that.
	mu sync.Mutex
	// mem is the arrays' memory: live buffers, the queue drain frees, the
	// young arrays and the collector's pacing (memorypart.go).
	mem memoryPart
	// xfer is host-device transfers: the copy and download streams,
	// stagers, pinned memory and its cache, the host limit (transfers.go).
	xfer transfers
	// recording is the memory recording under way and the latest
	// (RecordMemory, recorder.go).
	recording memoryRecording

	// closed is set once by Close; every method that can fail checks it
	// first (usable), so it is read without the lock.
	closed atomic.Bool

	// rng is the generator of unseeded Rand and RandN calls (rng.go).
	rng rng
	// sweep is sweepScript's state; only the runtime's goroutine touches it.
	sweep sweeper

	comms openComms // OpenComm's groups (comms.go)
}

// New creates a runtime: it reads the configuration, chooses and starts the
// backend, creates the pool and a Lua state with glua's modules preloaded.
// With Options.Shared it uses that backend and a quota view of that pool
// instead (see Shared); Options that ask for another backend or pool
// strategy are then an error naming the field.
func New(opts Options) (*Runtime, error) {
	cfg, err := opts.resolve(os.Getenv)
	if err != nil {
		return nil, err
	}
	rt := &Runtime{cfg: cfg, xfer: newTransfers(), script: scriptPart{stdout: opts.Stdout, sandbox: opts.Sandbox}, rng: newRNG()}
	if rt.script.luaMemory, err = luaMemory(cfg, opts.Sandbox); err != nil {
		return nil, fmt.Errorf("Lua memory limit: %w", err)
	}
	if rt.script.stdout == nil {
		rt.script.stdout = os.Stdout
	}
	if opts.Shared != nil {
		if err := rt.joinShared(opts.Shared, opts); err != nil {
			return nil, err
		}
		rt.L = rt.newLuaState(opts)
		return rt, nil
	}
	if rt.backend, rt.backendNote, err = openBackend(cfg); err != nil {
		return nil, err
	}
	if rt.exec, err = newExecutor(rt, rt.backend); err != nil {
		rt.backend.Close()
		return nil, err
	}
	if err := rt.newPool(); err != nil {
		rt.backend.Close()
		return nil, err
	}
	if rt.xfer.hostLimit, err = rt.cfg.HostMemoryLimit(); err != nil {
		rt.backend.Close()
		return nil, fmt.Errorf("host memory limit: %w", err)
	}
	rt.xfer.downloads.fits, rt.xfer.downloads.wake = rt.hostFits, rt.mem.wake
	if w, ok := rt.backend.(WorkspaceUser); ok {
		// cuBLAS's workspace is device memory like any other: the pool
		// accounts for it and its limits apply. Every stream of the
		// backend is this runtime's.
		w.SetWorkspaceAllocator(workspaceFrom(rt.pool, func(device.Stream) *Runtime { return rt }))
	}
	rt.L = rt.newLuaState(opts)
	return rt, nil
}

func (rt *Runtime) newPool() error {
	soft, hard, err := parseLimits(rt.backend, rt.cfg)
	if err != nil {
		return err
	}
	p, err := pool.New(rt.backend, pool.Config{
		Strategy:  rt.cfg.Pool.Strategy,
		SoftLimit: soft,
		HardLimit: hard,
		Pressure:  rt.collect,
	})
	if err != nil {
		return err
	}
	rt.pool = p
	if rt.script.sandbox {
		rt.script.ceiling = ceilingOf(rt.cfg, soft, hard)
	}
	return nil
}

// ErrClosed is returned by every method of a runtime after its Close.
var ErrClosed = errors.New("the runtime is closed")

// usable is nil until Close.
func (rt *Runtime) usable() error {
	if rt.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Config is the configuration in effect.
func (rt *Runtime) Config() config.Config { return rt.cfg }

// Backend is the backend arrays live on.
func (rt *Runtime) Backend() Backend { return rt.backend }

// BackendName is "cuda" or "cpu".
func (rt *Runtime) BackendName() string { return rt.backend.Name() }

// Pool is the runtime's memory pool: with Options.Shared, its *pool.Quota
// of the shared pool (Shared.Pool is the pool itself).
func (rt *Runtime) Pool() pool.Allocator { return rt.pool }

// Device describes the device arrays live on.
func (rt *Runtime) Device() (device.Info, error) { return rt.backend.Info() }

// Synchronize waits for all queued device work and lets the pool trim its
// cache to the soft limit. On a shared backend it waits for this runtime's
// work only (its streams), not for the other runtimes'.
func (rt *Runtime) Synchronize() error {
	if err := rt.usable(); err != nil {
		return err
	}
	if err := rt.uncapturable("synchronizing"); err != nil {
		return err
	}
	if err := rt.synchronize(); err != nil {
		return err
	}
	rt.drain()
	rt.pool.Synchronized()
	if rec := rt.recording.active(); rec != nil {
		rt.recordReserved(rec)
	}
	return nil
}

// Close frees every array this runtime still holds, then the pool, the
// backend and the Lua state. Arrays are unusable afterwards. Close is
// idempotent. With the debug setting, arrays still alive are reported as
// leaks in the returned error. A runtime on a Shared pool frees its arrays
// into the shared pool and closes only its quota view and its streams; the
// backend and the pool stay open for the others until Shared.Close.
//
// Close may be called from another goroutine while a script runs
// (DoString, DoFile, Call): it stops the script at its next instruction,
// waits for it to return (ErrClosed), then closes. A script stuck inside
// a Go call that does not return keeps Close waiting.
//
// The shutdown sequence, each step needing what the later ones release
// (internal/shutdowntest checks the orders against a recording backend):
//
//  1. Mark the runtime closed: every method returns ErrClosed from now
//     on, and cleanups of arrays Go's collector finds queue nothing.
//  2. Wait for the device: queued work may still read or write arrays.
//  3. Free the live arrays into the pool, on the streams they used.
//  4. On a Shared pool: close the quota view, then have the shared pool
//     record the events of this runtime's frees (Pool.Synchronized) while
//     its streams exist. It would otherwise record them lazily, when
//     another runtime looks for memory, on a stream destroyed by then.
//  5. Destroy the events and streams. A stream's cuBLAS handle goes with
//     it and gives its workspace back to the pool it came from, which on a
//     Shared pool is the shared pool itself (workspaceFrom).
//  6. Free page-locked host memory, while the backend can still do it.
//  7. A runtime of its own closes its pool, which returns every segment to
//     the backend, and then the backend, whose default-stream handles go
//     last. A runtime on a Shared pool detaches instead; Shared.Close does
//     the same two steps once no runtime is left.
//  8. Close the Lua state.
func (rt *Runtime) Close() error {
	if err := rt.script.entries.close(); err != nil {
		return err
	}
	live, first := rt.markClosed() // step 1
	if !first {
		return nil
	}
	rt.stopStagers()
	var errs []error
	add := func(more ...error) { errs = append(errs, more...) }
	add(rt.comms.Close())
	if rt.cfg.Pool.Debug && len(live) > 0 {
		add(leakReport(live))
	}
	add(rt.synchronize())     // step 2
	add(rt.freeLive(live)...) // step 3
	add(rt.closeGraphs()...)
	if rt.shared != nil { // step 4
		add(rt.pool.Close())
		rt.shared.pool.Synchronized()
	}
	add(rt.streams.Close(rt.backend)) // step 5
	add(rt.unpinDownloads(true)...)   // step 6
	add(rt.freePinned(true)...)
	rt.xfer.downloads.release(true)
	add(rt.closeDevice()) // step 7
	rt.L.Close()          // step 8
	return errors.Join(errs...)
}

// markClosed is Close's first step: it reports false when an earlier
// Close took it, and otherwise takes the live buffers from the runtime.
func (rt *Runtime) markClosed() (live []*buffer, first bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed.Load() {
		return nil, false
	}
	rt.closed.Store(true)
	return rt.mem.takeAll(), true
}

// stopStagers stops the threads of the stagers not yet closed, before
// the memory they copy into goes.
func (rt *Runtime) stopStagers() {
	rt.mu.Lock()
	stagers := rt.xfer.takeStagers()
	rt.mu.Unlock()
	for st := range stagers {
		st.stopThreads()
	}
}

// freeLive frees the arrays still alive at Close into the pool.
func (rt *Runtime) freeLive(live []*buffer) []error {
	var errs []error
	for _, b := range live {
		rt.mu.Lock()
		b.freed = true
		rt.mu.Unlock()
		if err := rt.pool.Free(&b.blk); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// closeDevice closes the pool and then the backend of a runtime of its
// own; a runtime on a Shared pool detaches instead, leaving both to
// Shared.Close.
func (rt *Runtime) closeDevice() error {
	if rt.shared != nil {
		rt.shared.detach(rt)
		return nil
	}
	return errors.Join(rt.pool.Close(), rt.backend.Close())
}

func leakReport(live []*buffer) error {
	sort.Slice(live, func(i, j int) bool { return live[i].id < live[j].id })
	var b strings.Builder
	fmt.Fprintf(&b, "%s still alive at close:", plural(len(live), "array", "arrays"))
	for _, buf := range live {
		fmt.Fprintf(&b, "\n  %s[%s] %s", buf.dtype, shapeString(buf.shape), config.FormatSize(buf.blk.Size))
		if buf.site.source != "" {
			fmt.Fprintf(&b, " allocated at %s", buf.site)
		}
	}
	return errors.New(b.String())
}
