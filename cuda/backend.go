package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// Config says which device to use and where to find the CUDA libraries.
// The zero value uses device 0, the default library names and the default
// kernel cache.
type Config struct {
	// Device is the CUDA device ordinal.
	Device int
	// LibCUDA, LibNVRTC and LibCUBLAS are the names (or paths) dlopen
	// tries, in order. Empty means the defaults (device.DefaultLibCUDA and
	// its siblings).
	LibCUDA, LibNVRTC, LibCUBLAS []string
	// LibNCCL is opened by the first OpenComm of a group of several
	// processes, never by Load: one process must not need NCCL.
	LibNCCL []string
	// KernelCache is the directory compiled kernels are cached in. "" is
	// os.UserCacheDir()/glua/kernels; "off" disables the cache.
	KernelCache string
}

var errClosed = errors.New("cuda: the backend is closed")

// Backend is the NVIDIA backend: one device's primary context, reached
// through the driver API, NVRTC and cuBLAS loaded at run time. It satisfies
// runtime.Backend, pool.EventSource and pool.AsyncSource; its methods may be
// called from any goroutine, by several runtimes at once (runtime.Shared).
// Close must not race with other calls.
//
// Locking: mu guards the maps below and is held only around map updates,
// never across a driver call that queues work, so launches, copies and
// matrix products of different goroutines do not wait on each other here
// (each cuBLAS handle has its own lock, per stream). mu is never held while
// calling into the caller (a WorkspaceAllocator's pool), because the pool
// calls NewEvent and DestroyEvent, which take mu, with its own lock held.
type Backend struct {
	workspaceAlloc WorkspaceAllocator // guarded by mu
	cfg            Config
	drv            driverAPI
	nvrtc          nvrtcAPI
	blas           cublasAPI
	lt             ltState     // small products' plans (gemmlt.go)
	libs           [3]*library // driver, NVRTC, cuBLAS
	cacheDir       string      // "" when the kernel cache is off
	cacheWhy       string      // why the cache is off, when it is

	dev     int32   // CUdevice
	ctx     uintptr // the retained primary context
	memPool uintptr // the device's default CUmemoryPool; 0 without stream-ordered allocation

	devices       int // how many the driver shows, after CUDA_VISIBLE_DEVICES
	name          string
	totalMem      uint64
	cc            [2]int
	sms           int
	limits        device.Limits
	driverVersion int
	nvrtcVersion  [2]int
	blasVersion   [3]int
	archs         []int // NVRTC's supported sm_XY, as XY

	sticky atomic.Pointer[Error]
	closed atomic.Bool
	// launches is the launch queue (launchqueue.go); nil where launches
	// all go straight to the driver.
	launches *launchQueue
	runs     runGraphs // the worker's graphs for runs of launches (rungraph.go)
	// capturing counts the streams recording a graph, which captures
	// names (graph.go): work on them that waits or touches host memory is
	// refused, and so is a wait for the whole device while any records.
	capturing atomic.Int32

	mu       sync.Mutex
	handles  map[device.Stream]*blasHandle
	streams  map[device.Stream]struct{}
	events   map[device.Event]struct{}
	modules  map[*Module]struct{}
	shared   map[string]*Module // Launcher's modules, by source and options
	pinned   hostBuffers        // AllocHost's buffers, by address
	words    hostWordPage       // reductions' results (hostword.go)
	captures map[device.Stream]bool

	compiles  atomic.Int64
	cacheHits atomic.Int64

	// NCCL is opened by the first OpenComm or Describe (ncclLib).
	ncclOnce   sync.Once
	ncclOpened *ncclLibrary
	ncclErr    error
	comms      map[*comm]struct{} // open communicators, guarded by mu
	commsOpen  atomic.Int32       // len(comms), read without mu by Launch
}

// Load opens the CUDA libraries, initialises the driver and retains the
// primary context of cfg.Device. On a machine without a driver it returns
// quickly with an error naming every library name it tried, so a caller can
// fall back to the CPU backend. It never panics.
func Load(cfg Config) (b *Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("cuda: loading failed: %v", r)
		}
	}()
	if len(cfg.LibCUDA) == 0 {
		cfg.LibCUDA = device.DefaultLibCUDA()
	}
	if len(cfg.LibNVRTC) == 0 {
		cfg.LibNVRTC = device.DefaultLibNVRTC()
	}
	if len(cfg.LibCUBLAS) == 0 {
		cfg.LibCUBLAS = device.DefaultLibCUBLAS()
	}
	if len(cfg.LibNCCL) == 0 {
		cfg.LibNCCL = device.DefaultLibNCCL()
	}
	if cfg.Device < 0 {
		return nil, fmt.Errorf("cuda: device %d: the ordinal must not be negative", cfg.Device)
	}
	b = &Backend{
		cfg:     cfg,
		handles: map[device.Stream]*blasHandle{},
		streams: map[device.Stream]struct{}{},
		events:  map[device.Event]struct{}{},
		modules: map[*Module]struct{}{},
		shared:  map[string]*Module{},
		pinned:  newHostBuffers(),
		comms:   map[*comm]struct{}{},
	}
	// Libraries stay loaded for the life of the process, as with CuPy and
	// PyTorch: unloading libcuda after cuInit is not supported by NVIDIA.
	if b.libs[0], err = openLibrary("CUDA driver", cfg.LibCUDA); err != nil {
		return nil, err
	}
	if err = b.libs[0].resolve(b.drv.symbols()); err != nil {
		return nil, err
	}
	// The driver first: on a machine without a GPU cuInit fails in
	// milliseconds, before the far larger cuBLAS is mapped.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err = b.initDevice(); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	// The release must not read the named result: `return nil, err` has
	// already set it to nil by the time this runs.
	retained := b
	defer func() {
		if err != nil {
			retained.drv.cuDevicePrimaryCtxRelease.call(uintptr(retained.dev))
		}
	}()
	if b.libs[1], err = openLibrary("NVRTC", cfg.LibNVRTC); err != nil {
		return nil, err
	}
	if err = b.libs[1].resolve(b.nvrtc.symbols()); err != nil {
		return nil, err
	}
	if b.libs[2], err = openLibrary("cuBLAS", cfg.LibCUBLAS); err != nil {
		return nil, err
	}
	if err = b.libs[2].resolve(b.blas.symbols()); err != nil {
		return nil, err
	}
	b.openLt()
	b.cacheDir, b.cacheWhy = kernelCacheDir(cfg.KernelCache)
	b.initVersions()
	if launchQueueWanted() {
		b.runs.off = !b.drv.hasNodeGraphs()
		b.launches = newLaunchQueue(queueDriver{
			start: func() error {
				return b.check("cuCtxSetCurrent", "launch queue", cuResult(b.drv.cuCtxSetCurrent.call(b.ctx)))
			},
			issueRun: b.issueRun,
			finish:   func() { b.runs.drop(b) },
		})
	}
	return b, nil
}

func kernelCacheDir(setting string) (dir, why string) {
	switch setting {
	case "off":
		return "", "disabled by configuration"
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return "", "no user cache directory: " + err.Error()
		}
		return filepath.Join(base, "glua", "kernels"), ""
	}
	return setting, ""
}

// queryDevice initialises the driver and reads cfg.Device's name, memory
// and attributes, which need no context. It runs on a locked OS thread.
func (b *Backend) queryDevice() error {
	d := &b.drv
	if err := b.check("cuInit", "", cuResult(d.cuInit.call(0))); err != nil {
		return err
	}
	var version int32
	if err := b.check("cuDriverGetVersion", "", cuResult(d.cuDriverGetVersion.call(uintptr(unsafe.Pointer(&version))))); err != nil {
		return err
	}
	b.driverVersion = int(version)
	var count int32
	if err := b.check("cuDeviceGetCount", "", cuResult(d.cuDeviceGetCount.call(uintptr(unsafe.Pointer(&count))))); err != nil {
		return err
	}
	b.devices = int(count)
	if b.cfg.Device >= int(count) {
		return fmt.Errorf("device %d requested but %d CUDA device(s) present", b.cfg.Device, count)
	}
	if err := b.check("cuDeviceGet", "", cuResult(d.cuDeviceGet.call(uintptr(unsafe.Pointer(&b.dev)), uintptr(b.cfg.Device)))); err != nil {
		return err
	}
	name := make([]byte, 256)
	if err := b.check("cuDeviceGetName", "", cuResult(d.cuDeviceGetName.call(uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)-1), uintptr(b.dev)))); err != nil {
		return err
	}
	b.name = goString(&name[0])
	var total uint64
	if err := b.check("cuDeviceTotalMem", "", cuResult(d.cuDeviceTotalMem.call(uintptr(unsafe.Pointer(&total)), uintptr(b.dev)))); err != nil {
		return err
	}
	b.totalMem = total
	attrs := []struct {
		attr int
		dst  *int
	}{
		{attrComputeCapabilityMajor, &b.cc[0]},
		{attrComputeCapabilityMinor, &b.cc[1]},
		{attrMultiprocessorCount, &b.sms},
		{attrMaxThreadsPerBlock, &b.limits.ThreadsPerBlock},
		{attrMaxBlockDimX, &b.limits.Block[0]},
		{attrMaxBlockDimY, &b.limits.Block[1]},
		{attrMaxBlockDimZ, &b.limits.Block[2]},
		{attrMaxGridDimX, &b.limits.Grid[0]},
		{attrMaxGridDimY, &b.limits.Grid[1]},
		{attrMaxGridDimZ, &b.limits.Grid[2]},
		{attrMaxSharedPerBlock, &b.limits.SharedPerBlock},
		{attrMaxSharedPerBlockOptin, &b.limits.SharedPerBlockOptin},
		{attrWarpSize, &b.limits.WarpSize},
		{attrMaxRegistersPerBlock, &b.limits.RegistersPerBlock},
	}
	for _, a := range attrs {
		v, err := b.attribute(a.attr)
		if err != nil {
			return err
		}
		*a.dst = v
	}
	if b.limits.SharedPerBlockOptin < b.limits.SharedPerBlock {
		b.limits.SharedPerBlockOptin = b.limits.SharedPerBlock
	}
	b.limits.Device = b.name
	return nil
}

// initDevice runs on a locked OS thread.
func (b *Backend) initDevice() error {
	if err := b.queryDevice(); err != nil {
		return err
	}
	d := &b.drv
	if err := b.check("cuDevicePrimaryCtxRetain", "", cuResult(d.cuDevicePrimaryCtxRetain.call(uintptr(unsafe.Pointer(&b.ctx)), uintptr(b.dev)))); err != nil {
		return err
	}
	if err := b.check("cuCtxSetCurrent", "", cuResult(d.cuCtxSetCurrent.call(b.ctx))); err != nil {
		d.cuDevicePrimaryCtxRelease.call(uintptr(b.dev))
		return err
	}
	// Stream-ordered allocation is optional: old drivers lack the symbols,
	// some devices (and MIG or vGPU setups) lack the feature.
	if d.cuDeviceGetDefaultMemPool != 0 && d.cuMemAllocFromPoolAsync != 0 && d.cuMemFreeAsync != 0 &&
		d.cuMemPoolSetAttribute != 0 && d.cuMemPoolGetAttribute != 0 && d.cuMemPoolTrimTo != 0 {
		if ok, err := b.attribute(attrMemoryPoolsSupported); err == nil && ok != 0 {
			var pool uintptr
			if d.cuDeviceGetDefaultMemPool.call(uintptr(unsafe.Pointer(&pool)), uintptr(b.dev)) == 0 {
				b.memPool = pool
			}
		}
	}
	return nil
}

func (b *Backend) attribute(attr int) (int, error) {
	var v int32
	r := cuResult(b.drv.cuDeviceGetAttribute.call(uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(b.dev)))
	if err := b.check("cuDeviceGetAttribute", fmt.Sprint(attr), r); err != nil {
		return 0, err
	}
	return int(v), nil
}

// initVersions reads the NVRTC and cuBLAS versions and NVRTC's target
// list; none of them needs a context. A failure leaves zeros, which
// Describe shows as unknown.
func (b *Backend) initVersions() {
	var major, minor int32
	if b.nvrtc.nvrtcVersion.call(uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor))) == 0 {
		b.nvrtcVersion = [2]int{int(major), int(minor)}
	}
	for i, prop := range []int{propMajor, propMinor, propPatch} {
		var v int32
		if b.blas.cublasGetProperty.call(uintptr(prop), uintptr(unsafe.Pointer(&v))) == 0 {
			b.blasVersion[i] = int(v)
		}
	}
	if b.nvrtc.nvrtcGetNumSupportedArchs != 0 && b.nvrtc.nvrtcGetSupportedArchs != 0 {
		var n int32
		if b.nvrtc.nvrtcGetNumSupportedArchs.call(uintptr(unsafe.Pointer(&n))) == 0 && n > 0 && n < 1024 {
			archs := make([]int32, n)
			if b.nvrtc.nvrtcGetSupportedArchs.call(uintptr(unsafe.Pointer(&archs[0]))) == 0 {
				for _, a := range archs {
					b.archs = append(b.archs, int(a))
				}
			}
		}
	}
}

// begin makes the primary context current on this goroutine's OS thread
// and pins the goroutine to that thread until end. The driver's current
// context is per OS thread and goroutines migrate between threads, so every
// method that calls the driver brackets its calls with begin/end.
//
// cuCtxSetCurrent (one call, a thread-local store in the driver) is used
// rather than cuCtxPushCurrent/cuCtxPopCurrent (two calls): the context left
// current on the thread afterwards is harmless, since every glua call sets
// it again, and it halves the per-method overhead of about 0.1–0.2 µs per
// purego call, next to the several microseconds of a kernel launch.
//
// begin first waits for the launch queue to empty, so that the driver sees
// each goroutine's calls in the order they were made (launchqueue.go).
func (b *Backend) begin() error { return b.enter(false) }

// enter is begin, for a launch when launch is set: only other calls end a
// run of launches (launchqueue.go).
func (b *Backend) enter(launch bool) error {
	if b.closed.Load() {
		return errClosed
	}
	if q := b.launches; q != nil {
		if err := q.drain(); err != nil {
			return err
		}
		if !launch {
			q.other()
		}
	}
	if e := b.sticky.Load(); e != nil {
		return e
	}
	runtime.LockOSThread()
	if r := cuResult(b.drv.cuCtxSetCurrent.call(b.ctx)); r != cudaSuccess {
		runtime.UnlockOSThread()
		return b.driverError("cuCtxSetCurrent", "", r)
	}
	return nil
}

func (b *Backend) end() { runtime.UnlockOSThread() }

// check turns a CUresult into an error (nil on success).
func (b *Backend) check(call, detail string, r cuResult) error {
	if r == cudaSuccess {
		return nil
	}
	return b.driverError(call, detail, r)
}

// driverError asks the driver for its name and sentence for r, and records
// a sticky error so that later calls refuse work with it.
func (b *Backend) driverError(call, detail string, r cuResult) *Error {
	var name, desc string
	var p *byte
	if b.drv.cuGetErrorName != 0 && b.drv.cuGetErrorName.call(uintptr(r), uintptr(unsafe.Pointer(&p))) == 0 {
		name = goString(p)
	}
	p = nil
	if b.drv.cuGetErrorString != 0 && b.drv.cuGetErrorString.call(uintptr(r), uintptr(unsafe.Pointer(&p))) == 0 {
		desc = goString(p)
	}
	e := newDriverError(call, detail, r, name, desc)
	if e.Sticky {
		b.sticky.CompareAndSwap(nil, e)
	}
	return e
}

// Name is "cuda".
func (b *Backend) Name() string { return "cuda" }

// DeviceCount is how many devices this process can use: those the
// driver shows, which CUDA_VISIBLE_DEVICES narrows.
func (b *Backend) DeviceCount() int { return b.devices }

// Info describes the device, with free memory read now.
func (b *Backend) Info() (device.Info, error) {
	free, total, err := b.MemInfo()
	if err != nil {
		return device.Info{}, err
	}
	return device.Info{
		Name:              b.name,
		Index:             b.cfg.Device,
		TotalMemory:       total,
		FreeMemory:        free,
		ComputeCapability: b.cc,
		Multiprocessors:   b.sms,
	}, nil
}

// MemInfo is the device's free and total memory in bytes.
func (b *Backend) MemInfo() (free, total uint64, err error) {
	if err := b.begin(); err != nil {
		return 0, 0, err
	}
	defer b.end()
	r := cuResult(b.drv.cuMemGetInfo.call(uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total))))
	if err := b.check("cuMemGetInfo", "", r); err != nil {
		return 0, 0, err
	}
	return free, total, nil
}

// Synchronize waits for all queued work on the device.
func (b *Backend) Synchronize() error {
	if err := b.refuseInCapture("cuCtxSynchronize", 0, true); err != nil {
		return err
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	return b.check("cuCtxSynchronize", "", cuResult(b.drv.cuCtxSynchronize.call()))
}

// Close destroys the cuBLAS handles, streams, events and modules this
// backend created and releases its hold on the primary context. Memory from
// Alloc and AllocHost is not freed here (the pool and the runtime own it),
// but the driver frees it when the last holder of the primary context lets
// go. Closing twice is harmless. The libraries stay loaded.
func (b *Backend) Close() error {
	if !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	if b.launches != nil {
		if err := b.launches.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	keep(b.check("cuCtxSetCurrent", "", cuResult(b.drv.cuCtxSetCurrent.call(b.ctx))))
	b.mu.Lock()
	handles := b.handles
	b.handles = map[device.Stream]*blasHandle{}
	b.mu.Unlock()
	// Outside b.mu, as everywhere: a workspace's release calls into the
	// pool, whose lock is taken before b.mu.
	for _, h := range handles {
		keep(b.destroyHandle(h))
	}
	keep(b.closeLt())
	keep(b.freeHostWords())
	b.mu.Lock()
	defer b.mu.Unlock()
	for m := range b.modules {
		if m.handle != 0 {
			keep(b.check("cuModuleUnload", m.name, cuResult(b.drv.cuModuleUnload.call(m.handle))))
			m.handle = 0
		}
		delete(b.modules, m)
	}
	clear(b.shared)
	for e := range b.events {
		keep(b.check("cuEventDestroy", "", cuResult(b.drv.cuEventDestroy.call(uintptr(e)))))
		delete(b.events, e)
	}
	for s := range b.streams {
		keep(b.check("cuStreamDestroy", "", cuResult(b.drv.cuStreamDestroy.call(uintptr(s)))))
		delete(b.streams, s)
	}
	keep(b.check("cuDevicePrimaryCtxRelease", "", cuResult(b.drv.cuDevicePrimaryCtxRelease.call(uintptr(b.dev)))))
	// After a sticky fault every call fails with it; the user has that
	// error already, and Close let go of everything it could.
	if b.sticky.Load() != nil {
		return nil
	}
	return errors.Join(errs...)
}
