package runtime

import (
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
	// copyStream and downloadStream are CopyStream's and DownloadStream's,
	// made on first use; they are also in streams.
	copyStream, downloadStream *Stream
	// stagers not yet closed, whose threads Close stops before the memory
	// they copy into goes (under mu).
	stagers map[*Stager]struct{}

	// kernels are kernels.map's translations and the count of the
	// temporaries partial overlaps took (kernelpart.go).
	kernels kernelPart

	// graphs is graph capture and replay (graphpart.go); part of it is
	// guarded by mu, part only touched by the runtime's goroutine.
	graphs graphPart

	mu sync.Mutex
	// buffers lists the buffers allocated and not yet freed, newest first,
	// linked through the buffers themselves: a map cost a hash insert and
	// delete on every allocation.
	buffers bufferList
	pending []*buffer // found unreachable by GC cleanups; freed by drain
	// pinned maps each live page-locked host allocation by its first byte;
	// pendingHost holds those found unreachable, for drain to free.
	pinned      map[*byte]livePinned
	pendingHost [][]byte
	pinnedIDs   uint64 // the last pinnedMem.id given
	// pinnedCache keeps freed pinned buffers by size class for reuse;
	// pinnedLive and pinnedCached count the bytes of each kind against
	// [host] pinned_limit (pinned.go). asyncCopies counts asynchronous
	// copies queued, asyncSynced how many the device had finished at the
	// last synchronisation for reuse. Only the runtime's goroutine touches
	// them; the cleanup goroutine only queues buffers in pendingHost.
	pinnedCache              map[uint64][][]byte
	pinnedLive, pinnedCached uint64
	pinnedLimitBytes         uint64
	pinnedLimitRead          bool
	asyncCopies, asyncSynced uint64
	// queued is set when pending or pendingHost gains an entry, so that
	// drain, called on every allocation, takes no lock when there is
	// nothing to free.
	queued atomic.Bool
	nextID uint64
	scopes []*scope
	// allocatedSinceGC counts the bytes allocated since the last
	// collection this runtime started (see collectIfDue), gcTrigger is
	// the count that starts the next; only the runtime's goroutine touches
	// them.
	allocatedSinceGC, gcTrigger uint64
	collected                   chan struct{} // closed when it has; nil when none runs
	// givenSinceGC is what of allocatedSinceGC went to arrays given to
	// the script, which a walk of the Lua state finds (sweep.go).
	givenSinceGC uint64

	// recording is the memory recording under way and the latest
	// (RecordMemory, recorder.go).
	recording memoryRecording
	// workspaces are the live cuBLAS workspaces of the runtime's streams
	// (workspaces.go), guarded by mu.
	workspaces []*pool.Block

	// hostLimit is [host] memory_limit in bytes (0: none); hostHeld counts
	// the bytes of this runtime's live host arrays against it.
	hostLimit uint64
	hostHeld  atomic.Int64
	// downloads is the memory of the new arrays of downloads, mapped
	// outside Go's heap and reused (hostmem.go).
	downloads downloadMemory

	// closed is set once by Close; every method that can fail checks it
	// first (usable), so it is read without the lock.
	closed atomic.Bool

	// rng is the generator of unseeded Rand and RandN calls (rng.go).
	rng rng
	// young are the arrays made since the last graduate, still without a
	// GC cleanup (see newArray). Only the runtime's goroutine touches it.
	young      []*Array
	youngBytes uint64 // what the young arrays allocated

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
	rt := &Runtime{cfg: cfg, pinned: make(map[*byte]livePinned), script: scriptPart{stdout: opts.Stdout, sandbox: opts.Sandbox}, rng: newRNG()}
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
	if rt.hostLimit, err = rt.cfg.HostMemoryLimit(); err != nil {
		rt.backend.Close()
		return nil, fmt.Errorf("host memory limit: %w", err)
	}
	rt.downloads.fits = rt.hostFits
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
	add(rt.freePinned(true)...)       // step 6
	rt.downloads.release(true)
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
	live = rt.buffers.all()
	rt.buffers = bufferList{}
	rt.pending = nil
	clear(rt.young)
	rt.young = nil
	return live, true
}

// stopStagers stops the threads of the stagers not yet closed, before
// the memory they copy into goes.
func (rt *Runtime) stopStagers() {
	rt.mu.Lock()
	stagers := rt.stagers
	rt.stagers = nil
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

// alloc takes a buffer for an array of the given shape from the pool.
func (rt *Runtime) alloc(shape []int, dt device.DType) (*buffer, error) {
	if err := rt.usable(); err != nil {
		return nil, err
	}
	if !dt.Valid() {
		return nil, fmt.Errorf("invalid dtype %s", dt)
	}
	if err := checkShape(shape); err != nil {
		return nil, err
	}
	rt.drain()
	nbytes := uint64(product(shape)) * uint64(dt.Size())
	b := &buffer{rt: rt, dtype: dt}
	if err := rt.pool.AllocInto(&b.blk, nbytes, rt.orderStream()); err != nil {
		rt.explainOOM(err)
		if rec := rt.recording.active(); rec != nil {
			rt.recordOOM(rec, rt.callerSite(), nbytes, err)
		}
		return nil, err
	}
	b.shape = append(b.dims[:0:len(b.dims)], shape...)
	b.site = rt.callerSite()
	if rec := rt.recording.active(); rec != nil {
		rt.recordAlloc(rec, b.site, &b.blk)
	}
	if c := rt.graphs.capture; c != nil {
		c.hold(rt, b)
	}
	rt.mu.Lock()
	rt.nextID++
	b.id = rt.nextID
	rt.buffers.push(b)
	if n := len(rt.scopes); n > 0 {
		rt.scopes[n-1].buffers = append(rt.scopes[n-1].buffers, b)
	}
	rt.mu.Unlock()
	rt.collectIfDue(nbytes)
	return b, nil
}

// freeExplicitly is freeBuffer for a free the script asked for (Free, a
// scope's end): memory given back that way is no reason to collect, so it
// no longer counts towards the next collection (collectIfDue), and a loop
// that frees what it allocates never starts one.
func (rt *Runtime) freeExplicitly(b *buffer) error { return rt.release(b, true) }

// freeBuffer frees b's memory once; later calls do nothing.
func (rt *Runtime) freeBuffer(b *buffer) error { return rt.release(b, false) }

func (rt *Runtime) release(b *buffer, explicit bool) error {
	rt.mu.Lock()
	if b.freed {
		rt.mu.Unlock()
		return nil
	}
	if explicit {
		rt.allocatedSinceGC -= min(rt.allocatedSinceGC, b.blk.Size)
	}
	b.freed = true
	rt.buffers.remove(b)
	if b.graphs > 0 { // a graph's replays still use the memory: it frees it
		b.orphan = true
		rt.graphs.orphan(b.blk.Size)
		rt.mu.Unlock()
		return nil
	}
	rt.mu.Unlock()
	return rt.returnBlock(b)
}

// returnBlock gives a freed buffer's memory back to the pool.
func (rt *Runtime) returnBlock(b *buffer) error {
	if rec := rt.recording.active(); rec != nil {
		return rt.recordedFree(rec, rt.pool, b.site, &b.blk)
	}
	return rt.pool.Free(&b.blk)
}

// unreachable runs on the garbage collector's cleanup goroutine when an
// Array over b can no longer be reached. It only queues the buffer: device
// calls happen on the runtime's own goroutine, in drain.
func (rt *Runtime) unreachable(b *buffer) {
	if b.arrays.Add(-1) != 0 {
		return
	}
	rt.mu.Lock()
	if !rt.closed.Load() && !b.freed {
		rt.pending = append(rt.pending, b)
		rt.queued.Store(true)
	}
	rt.mu.Unlock()
}

// drain frees the buffers the garbage collector found unreachable.
func (rt *Runtime) drain() {
	if !rt.queued.Load() {
		return
	}
	rt.mu.Lock()
	rt.queued.Store(false)
	pending := rt.pending
	rt.pending = nil
	graphs := rt.graphs.takePending()
	host := len(rt.pendingHost) > 0
	rt.mu.Unlock()
	for _, b := range pending {
		rt.freeBuffer(b)
	}
	for _, st := range graphs {
		rt.freeGraph(st)
	}
	if host {
		rt.freePinned(false)
	}
}

// collect is the pool's third rung before an out-of-memory error: run Go's
// collector so that arrays Lua no longer references are found, wait for their
// cleanups to queue them, and free them.
func (rt *Runtime) collect() {
	rt.sweepScript()
	rt.graduate()
	for round := 0; round < 2; round++ {
		collectAndWait(200 * time.Millisecond)
	}
	rt.drain()
}

// collectAndWait runs Go's collector and waits, at most timeout, for the
// cleanups it queued: they run on a goroutine of their own afterwards, and
// a sentinel's cleanup, queued in the same cycle, says the queue got that
// far (the timeout keeps a late one from holding the caller).
func collectAndWait(timeout time.Duration) {
	done := make(chan struct{})
	goruntime.AddCleanup(new([16]byte), func(c chan struct{}) { close(c) }, done)
	goruntime.GC()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}

// Stats is a snapshot of the pool's counters. On a Shared pool they are
// this runtime's own (Used, PeakUsed, Requested, LiveBlocks, the
// allocation, cache and retry counters, and its SoftLimit and HardLimit),
// except for what only the shared pool has: Reserved, PeakReserved (the
// most reserved since the runtime started), Reclaims, Segments,
// LargestFreeBlock, and the device's DeviceFree and DeviceTotal. Reserved
// therefore covers every runtime's arrays and the shared cache; the shared
// pool's own figures are Shared.Stats. LiveBlocks counts arrays only: the
// cuBLAS workspaces the runtime takes from its own pool, and the memory
// graphs keep for arrays freed since their capture, are in Used, not
// among the arrays (Status names them).
func (rt *Runtime) Stats() pool.Stats {
	s := rt.pool.Stats()
	if rt.shared == nil {
		n, _ := rt.ownBlocks()
		s.LiveBlocks -= min(n, s.LiveBlocks)
	}
	rt.mu.Lock()
	s.LiveBlocks -= min(rt.graphs.orphanN, s.LiveBlocks)
	rt.mu.Unlock()
	return s
}

// ownBlocks are the number and bytes of the live workspaces the runtime
// took from its own pool.
func (rt *Runtime) ownBlocks() (n int, bytes uint64) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, blk := range rt.workspaces {
		bytes += blk.Size
	}
	return len(rt.workspaces), bytes
}

// LiveArrays is the number of buffers allocated and not yet freed.
func (rt *Runtime) LiveArrays() int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.buffers.n
}

// explainOOM adds to an out-of-memory error what only the runtime knows:
// the allocation sites holding this runtime's memory, and the setting that
// would give more: the hard limit's, on every backend alike, when the
// limit stopped the allocation; the CPU backend's capacity when that ran
// out (on a GPU the card's memory is what it is). On the CPU backend the
// memory is also named as the backend's.
func (rt *Runtime) explainOOM(err error) {
	var oom *pool.OOMError
	if !errors.As(err, &oom) {
		return
	}
	for _, u := range rt.Usage() {
		oom.Holders = append(oom.Holders, pool.Holder{Site: u.Site, NBytes: u.NBytes, Arrays: u.Arrays})
	}
	cpu := rt.backend.Name() == "cpu"
	if cpu {
		oom.Memory = "CPU backend memory"
	}
	if oom.HardLimit > 0 && oom.InUse+oom.Cached+oom.Requested > oom.HardLimit {
		oom.Hint = hardLimitHint
		return
	}
	if cpu && (oom.DeviceTotal == 0 || oom.DeviceFree < oom.Requested) {
		oom.Hint = fmt.Sprintf("the CPU backend's capacity is [cpu] memory = %q; raise it in config.toml, with GLUA_CPU_MEMORY or with --cpu-memory", rt.cfg.CPU.Memory)
	}
}

// hardLimitHint names every setting of the hard limit, for an allocation
// the limit refused.
const hardLimitHint = "the hard limit is [pool] hard_limit; raise it with pool.set_limit{hard = ...}, in config.toml, with GLUA_HARD_MEMORY_LIMIT or with --hard-limit"

// gcMinBytes is the least a runtime allocates between the collections it
// starts itself, so that a small working set does not collect constantly.
const gcMinBytes = 16 << 20

// collectIfDue looks for dropped arrays when the arrays allocated since
// the last look pass [pool] gc_percent of the bytes live arrays held then
// (and gcMinBytes): Go's own pacing sees only the few bytes of Go memory an
// array takes, not its device memory, so without this a loop that drops
// arrays fills the device before anything is collected (CUDA.jl paces its
// collector by device memory the same way). The arrays a script was given
// are found by walking the Lua state, at once (sweepScript); those Go code
// made, and a script's when the walk cannot see everything, by Go's
// collector.
func (rt *Runtime) collectIfDue(nbytes uint64) {
	if rt.cfg.Pool.GCPercent < 0 {
		return
	}
	rt.allocatedSinceGC += nbytes
	trigger := max(rt.gcTrigger, gcMinBytes)
	if rt.allocatedSinceGC < trigger || rt.sweep.soon(rt.allocatedSinceGC, trigger) {
		return
	}
	if rt.sweepScript() {
		rt.allocatedSinceGC -= min(rt.givenSinceGC, rt.allocatedSinceGC)
		rt.givenSinceGC = 0
		rt.gcTrigger = rt.nextTrigger()
		if rt.allocatedSinceGC < trigger {
			return
		}
	}
	rt.startCollection(trigger)
}

// nextTrigger is [pool] gc_percent of what live arrays hold now. It reads
// the runtime's own list: pool.Stats would ask the device for its free
// memory too, which takes as long as a walk on the GPU.
func (rt *Runtime) nextTrigger() uint64 {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.buffers.bytes / 100 * uint64(rt.cfg.Pool.GCPercent)
}

// startCollection starts Go's collector on a goroutine of its own,
// concurrently with the script; the cleanups it triggers queue the dropped
// arrays, and the next allocation frees them. A script that allocates
// another trigger's worth before the collection is done waits for it,
// which bounds the memory dropped arrays can hold.
func (rt *Runtime) startCollection(trigger uint64) {
	if rt.collected != nil {
		select {
		case <-rt.collected:
		default:
			if rt.allocatedSinceGC < 2*trigger {
				return
			}
			<-rt.collected
		}
		rt.collected = nil
		rt.drain()
	}
	rt.allocatedSinceGC, rt.givenSinceGC = 0, 0
	rt.gcTrigger = rt.nextTrigger()
	rt.graduate() // the newest arrays too, so that this collection can find them
	done := make(chan struct{})
	rt.collected = done
	go func() {
		collectAndWait(200 * time.Millisecond)
		close(done)
	}()
}
