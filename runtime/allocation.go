package runtime

import (
	"errors"
	"fmt"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/pool"
)

// arrayBytes checks what every new array, on the device or the host, must
// be (a usable runtime, a dtype, a shape) and returns its size.
func (rt *Runtime) arrayBytes(shape []int, dt device.DType) (uint64, error) {
	if err := rt.usable(); err != nil {
		return 0, err
	}
	if !dt.Valid() {
		return 0, fmt.Errorf("invalid dtype %s", dt)
	}
	if err := checkShape(shape); err != nil {
		return 0, err
	}
	return uint64(product(shape)) * uint64(dt.Size()), nil
}

// alloc takes a buffer for an array of the given shape from the pool.
func (rt *Runtime) alloc(shape []int, dt device.DType) (*buffer, error) {
	nbytes, err := rt.arrayBytes(shape, dt)
	if err != nil {
		return nil, err
	}
	rt.drain()
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
	rt.mem.add(b)
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
		rt.mem.pacer.freed(b.blk.Size)
	}
	b.freed = true
	rt.mem.remove(b)
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
		rt.mem.queue(b)
	}
	rt.mu.Unlock()
}

// drain frees the buffers the garbage collector found unreachable.
func (rt *Runtime) drain() {
	if !rt.mem.hasQueued() {
		return
	}
	rt.mu.Lock()
	pending := rt.mem.takePending()
	graphs := rt.graphs.takePending()
	host := rt.xfer.hostPending()
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
	if rt.xfer.downloads.hasUnpin() {
		rt.unpinDownloads(false)
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
	return rt.mem.workspaceBytes()
}

// LiveArrays is the number of buffers allocated and not yet freed.
func (rt *Runtime) LiveArrays() int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.mem.buffers.n
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
