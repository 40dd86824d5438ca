package cuda

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// Function is one kernel entry point of a Module.
type Function struct {
	m            *Module
	name         string
	handle       uintptr // CUfunction
	maxThreads   int     // per block, given the kernel's register use
	staticShared int     // bytes of __shared__ arrays
	// dynLimit is the dynamic shared memory the function is opted into
	// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). Launches read it
	// without a lock; dynMu serialises raising it, which only ever goes up,
	// so that one goroutine can never lower the attribute below what a
	// concurrent launch (another runtime's, through a shared Launcher
	// module) has just checked it for.
	dynLimit atomic.Int64
	dynMu    sync.Mutex
	// launched is set by the first launch that reached the driver: a
	// kernel's first launch is never queued (launchqueue.go).
	launched atomic.Bool
}

// Function looks up a kernel by its (extern "C") name.
func (m *Module) Function(entry string) (*Function, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f := m.funcs[entry]; f != nil {
		return f, nil
	}
	if m.handle == 0 {
		return nil, fmt.Errorf("cuda: Function(%s): module %s is unloaded", entry, m.name)
	}
	b := m.b
	if err := b.begin(); err != nil {
		return nil, err
	}
	defer b.end()
	cName := cString(entry)
	var h uintptr
	r := cuResult(b.drv.cuModuleGetFunction.call(uintptr(unsafe.Pointer(&h)), m.handle, uintptr(unsafe.Pointer(&cName[0]))))
	if err := b.check("cuModuleGetFunction", entry, r); err != nil {
		return nil, err
	}
	f := &Function{m: m, name: entry, handle: h}
	attr := func(a int) (int, error) {
		var v int32
		r := cuResult(b.drv.cuFuncGetAttribute.call(uintptr(unsafe.Pointer(&v)), uintptr(a), h))
		return int(v), b.check("cuFuncGetAttribute", entry, r)
	}
	var err error
	if f.maxThreads, err = attr(funcAttrMaxThreadsPerBlock); err != nil {
		return nil, err
	}
	if f.staticShared, err = attr(funcAttrSharedSizeBytes); err != nil {
		return nil, err
	}
	f.dynLimit.Store(int64(max(b.limits.SharedPerBlock-f.staticShared, 0)))
	m.funcs[entry] = f
	return f, nil
}

// Name is the kernel's entry point name.
func (f *Function) Name() string { return f.name }

// MaxThreadsPerBlock is the largest block this kernel can launch with on
// this device, given its register use.
func (f *Function) MaxThreadsPerBlock() int { return f.maxThreads }

// checkLaunch rejects a configuration the driver would refuse, with a
// message that names the limit, so a bad launch is a clear error rather
// than CUDA_ERROR_INVALID_VALUE. The device's limits are checked by the
// rule every backend shares (device.Limits); the kernel's own, which only
// this backend knows, after them.
func checkLaunch(l device.Limits, f *Function, grid, block [3]uint32, shared uint32) error {
	if err := l.CheckLaunch(grid, block, shared, f.staticShared); err != nil {
		return fmt.Errorf("cuda: launch %s: %w", f.name, err)
	}
	threads := uint64(block[0]) * uint64(block[1]) * uint64(block[2])
	if f.maxThreads > 0 && threads > uint64(f.maxThreads) {
		return fmt.Errorf("cuda: launch %s: a block of %d threads exceeds this kernel's limit of %d threads per block (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, set by its register use)",
			f.name, threads, f.maxThreads)
	}
	return nil
}

// marshalArgs stores each kernel argument in its own 8-byte slot, as the
// kernel's parameter type expects it: the driver copies as many bytes from
// each slot as the parameter has, which on a little-endian host are the low
// bytes holding the value. slots has len(args) elements.
func marshalArgs(slots []uint64, args []any) error {
	for i, a := range args {
		switch v := a.(type) {
		case device.Ptr:
			slots[i] = uint64(v)
		case int32:
			slots[i] = uint64(uint32(v))
		case uint32:
			slots[i] = uint64(v)
		case int64:
			slots[i] = uint64(v)
		case uint64:
			slots[i] = v
		case float32:
			slots[i] = uint64(math.Float32bits(v))
		case float64:
			slots[i] = math.Float64bits(v)
		default:
			return fmt.Errorf("argument %d has Go type %T; kernel arguments are device.Ptr, int32, uint32, int64, uint64, float32 or float64", i+1, a)
		}
	}
	return nil
}

// paramBlock is one launch's arguments: each in its slot, and the
// pointers to the slots that cuLaunchKernel reads. Launches reuse blocks
// from a pool: a tiny kernel's launch costs a few microseconds, and
// allocating these each time was a measurable part of it. The driver has
// copied the arguments when cuLaunchKernel returns.
type paramBlock struct {
	slots  [pooledParams]uint64
	params [pooledParams + 1]unsafe.Pointer // +1 keeps &params[0] valid with no arguments
}

const pooledParams = 32

var paramBlocks = sync.Pool{New: func() any { return new(paramBlock) }}

// Launch queues f on stream s with the given grid and block dimensions and
// bytes of dynamic shared memory. args are device.Ptr, int32, uint32,
// int64, uint64, float32 or float64, in the kernel's parameter order; each
// must match the kernel's parameter type in size.
//
// The launch may be handed to the launch queue's worker (launchqueue.go):
// then a launch the driver refuses is reported by the next call on the
// backend, as a kernel's own faults are.
func (b *Backend) Launch(f *Function, grid, block [3]uint32, shared uint32, s device.Stream, args ...any) error {
	if f == nil || f.m == nil {
		return fmt.Errorf("cuda: Launch: nil function")
	}
	if f.m.b != b {
		return fmt.Errorf("cuda: launch %s: the function belongs to another backend", f.name)
	}
	if err := checkLaunch(b.limits, f, grid, block, shared); err != nil {
		return err
	}
	var slots []uint64
	var params []unsafe.Pointer
	if len(args) <= pooledParams {
		blk := paramBlocks.Get().(*paramBlock)
		defer paramBlocks.Put(blk)
		slots, params = blk.slots[:len(args)], blk.params[:len(args)+1]
	} else {
		slots, params = make([]uint64, len(args)), make([]unsafe.Pointer, len(args)+1)
	}
	if err := marshalArgs(slots, args); err != nil {
		return fmt.Errorf("cuda: launch %s: %w", f.name, err)
	}
	f.m.mu.Lock()
	unloaded := f.m.handle == 0
	f.m.mu.Unlock()
	if unloaded {
		return fmt.Errorf("cuda: launch %s: module %s is unloaded", f.name, f.m.name)
	}
	if q := b.launches; q != nil && len(args) <= pooledParams && f.launched.Load() &&
		int64(shared) <= f.dynLimit.Load() && b.capturing.Load() == 0 && b.words.awaited.Load() == 0 &&
		b.commsOpen.Load() == 0 {
		if b.closed.Load() {
			return errClosed
		}
		if e := b.sticky.Load(); e != nil {
			return e
		}
		if q.push(f, grid, block, shared, s, slots) {
			return nil
		}
	}
	for i := range slots {
		params[i] = unsafe.Pointer(&slots[i])
	}
	if err := b.enter(true); err != nil {
		return err
	}
	defer b.end()
	// Dynamic shared memory beyond the default 48 KiB per block must be
	// opted into, once per function and size.
	if int64(shared) > f.dynLimit.Load() {
		if err := b.raiseDynamicShared(f, shared); err != nil {
			return err
		}
	}
	// params has one spare slot, so &params[0] is valid even for a kernel
	// without parameters (the driver then ignores it).
	r := cuResult(b.drv.cuLaunchKernel.call(f.handle,
		uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
		uintptr(block[0]), uintptr(block[1]), uintptr(block[2]),
		uintptr(shared), uintptr(s), uintptr(unsafe.Pointer(&params[0])), 0))
	runtime.KeepAlive(slots)
	runtime.KeepAlive(params)
	if err := b.check("cuLaunchKernel", f.name, r); err != nil {
		return err
	}
	f.launched.Store(true)
	return nil
}

// issueQueued is the launch queue's worker's call into the driver, on its
// thread, with the context current there.
func (b *Backend) issueQueued(e *queuedLaunch, params *[pooledParams + 1]unsafe.Pointer) error {
	for i := range e.n {
		params[i] = unsafe.Pointer(&e.slots[i])
	}
	r := cuResult(b.drv.cuLaunchKernel.call(e.f.handle,
		uintptr(e.grid[0]), uintptr(e.grid[1]), uintptr(e.grid[2]),
		uintptr(e.block[0]), uintptr(e.block[1]), uintptr(e.block[2]),
		uintptr(e.shared), uintptr(e.stream), uintptr(unsafe.Pointer(&params[0])), 0))
	return b.check("cuLaunchKernel", e.f.name, r)
}

// PreferSharedCarveout sets the share of each multiprocessor's unified L1
// and shared memory, in percent, that f prefers as shared memory
// (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT). The driver takes
// it as a hint: a launch that needs more shared memory gets more.
func (b *Backend) PreferSharedCarveout(f *Function, percent int) error {
	if percent < 0 || percent > 100 {
		return fmt.Errorf("cuda: %s: a shared memory carveout of %d%%: want 0 to 100", f.name, percent)
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	r := cuResult(b.drv.cuFuncSetAttribute.call(f.handle, funcAttrPreferredCarveout, uintptr(percent)))
	return b.check("cuFuncSetAttribute", f.name+" PREFERRED_SHARED_MEMORY_CARVEOUT", r)
}

// raiseDynamicShared opts f into at least shared bytes of dynamic shared
// memory. It runs inside begin/end. The attribute is a ceiling, so raising
// it never hurts a smaller launch; it is never lowered, and the check and
// the store happen under f.dynMu, so that two launches asking for
// different sizes at once cannot leave the attribute below dynLimit.
func (b *Backend) raiseDynamicShared(f *Function, shared uint32) error {
	f.dynMu.Lock()
	defer f.dynMu.Unlock()
	if int64(shared) <= f.dynLimit.Load() {
		return nil // raised meanwhile by another launch
	}
	r := cuResult(b.drv.cuFuncSetAttribute.call(f.handle, funcAttrMaxDynamicSharedMem, uintptr(shared)))
	if err := b.check("cuFuncSetAttribute", f.name+" MAX_DYNAMIC_SHARED_SIZE_BYTES", r); err != nil {
		return err
	}
	f.dynLimit.Store(int64(shared))
	return nil
}
