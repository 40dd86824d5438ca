package runtime

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"sync"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/pool"
)

// Shared is one backend and one memory pool that several runtimes draw on,
// as RMM stacks limiting(pool(cuda)) once per tenant over one pool: the
// runtimes share the device, the cache of freed blocks and the pool's hard
// limit, while each has a quota of its own.
//
//	shared, err := runtime.NewShared(runtime.Options{HardLimit: "60GiB"})
//	defer shared.Close()
//	rt, err := runtime.New(runtime.Options{Shared: shared, HardLimit: "4GiB"})
//	defer rt.Close()
//
// A runtime created with Options.Shared uses the shared backend and a quota
// of the shared pool (pool.Pool.Quota): its HardLimit caps the bytes
// its own arrays hold, its SoftLimit trims the shared cache after its frees,
// and when an allocation does not fit, it collects only its own garbage.
// Its arrays stay its own: no other runtime can use or free them. Closing
// it frees its arrays into the shared pool, where the others may reuse the
// memory; the backend and the pool stay open until Shared.Close.
//
// The shared pool's own limits (from the Options given to NewShared) cap
// what all the runtimes hold together, plus the cuBLAS workspaces of the
// streams that ran a matrix product, which belong to the shared pool and to
// no runtime's quota. Memory one runtime dropped but has not yet collected
// counts against the shared limit until that runtime next allocates (or
// calls collectgarbage), since only the owner frees its arrays.
//
// A Shared is safe for concurrent use. Each runtime is still used from one
// goroutine at a time; different runtimes run at once.
type Shared struct {
	cfg         config.Config
	backend     Backend
	backendNote string
	pool        *pool.Pool

	mu       sync.Mutex
	runtimes map[*Runtime]struct{}
	// streams are the runtimes' own streams, by the runtime whose each
	// is: a workspace the shared pool gives a stream's cuBLAS handle is
	// that runtime's, in its memory profile.
	streams map[device.Stream]*Runtime
	closed  bool
}

// ErrSharedInUse is returned by Shared.Close while runtimes still use it.
var ErrSharedInUse = errors.New("the shared pool is still in use")

// NewShared opens a backend and a memory pool for several runtimes to
// share. It reads the configuration as New does (a zero Options field means
// "from config") and uses its backend, device, CPU and pool settings:
// Backend, Device, CPUMemory, CPUThreads, MemoryPool, and SoftLimit and
// HardLimit as the limits of the whole pool. The Lua settings (Context,
// Sandbox, Stdout) are each runtime's and are ignored here.
func NewShared(opts Options) (*Shared, error) {
	if opts.Shared != nil {
		return nil, errors.New("runtime.NewShared: Options.Shared must be nil: a shared pool cannot draw on another")
	}
	cfg, err := opts.resolve(os.Getenv)
	if err != nil {
		return nil, err
	}
	s := &Shared{cfg: cfg, runtimes: make(map[*Runtime]struct{}), streams: make(map[device.Stream]*Runtime)}
	if s.backend, s.backendNote, err = openBackend(cfg); err != nil {
		return nil, err
	}
	soft, hard, err := parseLimits(s.backend, cfg)
	if err == nil {
		// No Pressure: only each runtime may free its own arrays, and its
		// view's ladder collects them.
		s.pool, err = pool.New(s.backend, pool.Config{Strategy: cfg.Pool.Strategy, SoftLimit: soft, HardLimit: hard})
	}
	if err != nil {
		s.backend.Close()
		return nil, err
	}
	if w, ok := s.backend.(WorkspaceUser); ok {
		// A cuBLAS handle and its workspace belong to a stream and live
		// until the stream is destroyed, possibly by another runtime than
		// the one whose matmul created them: they come from the shared
		// pool itself, never from a runtime's quota view, which would free
		// the workspace under the handle when that runtime closed.
		w.SetWorkspaceAllocator(workspaceFrom(s.pool, s.streamOwner))
	}
	return s, nil
}

// parseLimits reads the configured soft and hard limits, percentages being
// of the device's total memory.
func parseLimits(b Backend, cfg config.Config) (soft, hard uint64, err error) {
	_, total, err := b.MemInfo()
	if err != nil {
		return 0, 0, err
	}
	if soft, err = parseLimit("soft", cfg.Pool.SoftLimit, total); err != nil {
		return 0, 0, err
	}
	if hard, err = parseLimit("hard", cfg.Pool.HardLimit, total); err != nil {
		return 0, 0, err
	}
	return soft, hard, nil
}

// Close closes the shared pool and the backend. While runtimes created on
// it are open it does nothing and returns an error wrapping ErrSharedInUse:
// close them first (step 7 of Runtime.Close's sequence). Closing twice is
// harmless.
func (s *Shared) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if n := len(s.runtimes); n > 0 {
		return fmt.Errorf("runtime.Shared.Close: %w by %s; close them first", ErrSharedInUse, plural(n, "open runtime", "open runtimes"))
	}
	s.closed = true
	var errs []error
	if err := s.pool.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := s.backend.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Pool is the shared pool itself: its Stats cover every runtime's arrays
// and the cuBLAS workspaces, and its limits cap them all together.
func (s *Shared) Pool() *pool.Pool { return s.pool }

// Stats is the shared pool's accounting: every runtime's arrays together.
func (s *Shared) Stats() pool.Stats { return s.pool.Stats() }

// Backend is the backend the runtimes share.
func (s *Shared) Backend() Backend { return s.backend }

// Config is the configuration the backend and the pool were opened with.
func (s *Shared) Config() config.Config { return s.cfg }

// Runtimes is the number of open runtimes using s.
func (s *Shared) Runtimes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.runtimes)
}

// attach registers rt, so that Close refuses until rt closes.
func (s *Shared) attach(rt *Runtime) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("runtime.New: Options.Shared is closed")
	}
	s.runtimes[rt] = struct{}{}
	return nil
}

func (s *Shared) detach(rt *Runtime) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.runtimes, rt)
	maps.DeleteFunc(s.streams, func(_ device.Stream, owner *Runtime) bool { return owner == rt })
}

// ownStream notes that st is rt's.
func (s *Shared) ownStream(st device.Stream, rt *Runtime) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streams[st] = rt
}

// streamOwner is the runtime whose stream st is; nil when none's.
func (s *Shared) streamOwner(st device.Stream) *Runtime {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.streams[st]
}

// conflicts rejects Options that ask for another backend or pool than s
// provides. A zero field, or one that says what s already is, is fine.
func (s *Shared) conflicts(opts Options) error {
	name := s.backend.Name()
	if opts.Backend != "" && opts.Backend != "auto" && opts.Backend != name {
		return fmt.Errorf("runtime.New: Options.Backend is %q but the shared pool (Options.Shared) runs on the %s backend; leave Backend empty", opts.Backend, name)
	}
	if opts.MemoryPool != "" && opts.MemoryPool != s.pool.Strategy() {
		return fmt.Errorf("runtime.New: Options.MemoryPool is %q but the shared pool (Options.Shared) has strategy %q; leave MemoryPool empty", opts.MemoryPool, s.pool.Strategy())
	}
	if opts.Device != 0 && opts.Device != s.cfg.CUDA.Device {
		return fmt.Errorf("runtime.New: Options.Device is %d but the shared pool (Options.Shared) uses device %d; leave Device 0", opts.Device, s.cfg.CUDA.Device)
	}
	if opts.CPUMemory != "" {
		wantCfg := s.cfg
		wantCfg.CPU.Memory = opts.CPUMemory
		want, err := wantCfg.CPUCapacity()
		if err != nil {
			return fmt.Errorf("runtime.New: Options.CPUMemory: %w", err)
		}
		have, err := s.cfg.CPUCapacity()
		if err != nil || want != have {
			return fmt.Errorf("runtime.New: Options.CPUMemory is %q but the shared pool's (Options.Shared) CPU capacity is %q; leave CPUMemory empty", opts.CPUMemory, s.cfg.CPU.Memory)
		}
	}
	if opts.CPUThreads != 0 && opts.CPUThreads != s.cfg.CPU.Threads {
		return fmt.Errorf("runtime.New: Options.CPUThreads is %d but the shared pool (Options.Shared) was opened with %d; leave CPUThreads 0", opts.CPUThreads, s.cfg.CPU.Threads)
	}
	return nil
}

// joinShared makes rt a tenant of s: the shared backend, a stream of its
// own and a quota view of the shared pool with rt's limits.
func (rt *Runtime) joinShared(s *Shared, opts Options) error {
	if err := s.conflicts(opts); err != nil {
		return err
	}
	// What the runtime runs on is the shared pool's, whatever its own
	// configuration said; Config reports what is in effect.
	rt.cfg.Backend, rt.cfg.CPU, rt.cfg.CUDA = s.cfg.Backend, s.cfg.CPU, s.cfg.CUDA
	rt.cfg.Pool.Strategy = s.cfg.Pool.Strategy
	if err := s.attach(rt); err != nil {
		return err
	}
	rt.shared = s
	rt.backend = s.backend
	rt.backendNote = s.backendNote + "; shared with other runtimes"
	err := rt.openShared(s)
	if err != nil {
		rt.streams.Close(rt.backend)
		s.detach(rt)
	}
	return err
}

func (rt *Runtime) openShared(s *Shared) error {
	var err error
	if rt.exec, err = newExecutor(rt, rt.backend); err != nil {
		return err
	}
	// A stream of its own: the runtime's work is ordered only after its
	// own, not queued behind the other runtimes' on one default stream,
	// and the pool lets another stream reuse a block this runtime freed
	// only after an event says its work on the block is done.
	if rt.streams.own, err = rt.backend.NewStream(); err != nil {
		return err
	}
	rt.streams.addStream(rt.streams.own)
	s.ownStream(rt.streams.own, rt)
	soft, hard, err := parseLimits(rt.backend, rt.cfg)
	if err != nil {
		return err
	}
	q, err := s.pool.Quota(pool.Config{SoftLimit: soft, HardLimit: hard, Pressure: rt.collect})
	if err != nil {
		return fmt.Errorf("runtime.New: %w", err)
	}
	rt.pool = q
	if rt.script.sandbox {
		rt.script.ceiling = ceilingOf(rt.cfg, soft, hard)
	}
	return nil
}

// Shared is the shared pool the runtime draws on, or nil when it has a
// backend and a pool of its own.
func (rt *Runtime) Shared() *Shared { return rt.shared }

// syncOwnStreams waits for the work this runtime queued: on a shared
// backend, cuCtxSynchronize would also wait for every other runtime's.
func (rt *Runtime) syncOwnStreams() error {
	var errs []error
	for _, s := range rt.streams.all() {
		if err := rt.backend.StreamSynchronize(s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// synchronize waits for the device work this runtime can see: the whole
// device when the runtime has it to itself, its own streams when shared.
func (rt *Runtime) synchronize() error {
	if rt.shared != nil {
		return rt.syncOwnStreams()
	}
	return rt.backend.Synchronize()
}

// plural is "1 runtime" or "3 runtimes".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
