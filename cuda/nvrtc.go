package cuda

import (
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// Module is compiled device code loaded into the backend's context.
type Module struct {
	b      *Backend
	name   string
	handle uintptr // CUmodule; 0 once unloaded

	mu    sync.Mutex
	funcs map[string]*Function
}

// KernelStats counts what Compile did, for benchmarks and tests.
type KernelStats struct {
	Compiles  int64 // NVRTC compilations
	CacheHits int64 // modules loaded from the disk cache
}

// KernelStats reports Compile's counters since Load.
func (b *Backend) KernelStats() KernelStats {
	return KernelStats{Compiles: b.compiles.Load(), CacheHits: b.cacheHits.Load()}
}

// KernelCacheStats is KernelStats as two numbers, for callers that ask
// any backend through an interface.
func (b *Backend) KernelCacheStats() (compiles, cacheHits int64) {
	st := b.KernelStats()
	return st.Compiles, st.CacheHits
}

// chooseTarget picks what NVRTC compiles for. A cubin for the device's own
// sm_XY loads without a JIT step; when this NVRTC does not know the device
// (an NVRTC older than the GPU) it emits PTX for the newest virtual
// architecture it knows at or below the device's, which the driver JITs.
// archs is NVRTC's list of supported sm_XY (empty when unknown).
func chooseTarget(cc [2]int, archs []int, haveCubin bool) (arch string, cubin bool, err error) {
	want := cc[0]*10 + cc[1]
	if haveCubin && (len(archs) == 0 || slices.Contains(archs, want)) {
		return fmt.Sprintf("sm_%d", want), true, nil
	}
	if len(archs) == 0 {
		return fmt.Sprintf("compute_%d", want), false, nil
	}
	best := 0
	for _, a := range archs {
		if a <= want && a > best {
			best = a
		}
	}
	if best == 0 {
		return "", false, fmt.Errorf("cuda: NVRTC supports none of the architectures up to the device's sm_%d (it knows %v)", want, archs)
	}
	return fmt.Sprintf("compute_%d", best), false, nil
}

// Compile compiles CUDA C source with NVRTC for this device and loads it.
// name is the file name NVRTC's messages use. The image is cached on disk
// (see Config.KernelCache); a damaged or unloadable cache entry is compiled
// again and rewritten, never an error. A compile error carries NVRTC's log.
func (b *Backend) Compile(source, name string, options []string) (*Module, error) {
	if name == "" {
		name = "kernel.cu"
	}
	if b.closed.Load() {
		return nil, errClosed
	}
	if e := b.sticky.Load(); e != nil {
		return nil, e
	}
	arch, cubin, err := chooseTarget(b.cc, b.archs, b.nvrtc.nvrtcGetCUBIN != 0 && b.nvrtc.nvrtcGetCUBINSize != 0)
	if err != nil {
		return nil, err
	}
	opts := append([]string{"--gpu-architecture=" + arch}, options...)
	path := ""
	if b.cacheDir != "" {
		path = cacheFile(b.cacheDir, cacheKey(source, name, opts, arch, b.nvrtcVersion), arch)
		if image, err := readCacheEntry(path); err == nil {
			m, err := b.loadModule(image, name)
			if err == nil {
				b.cacheHits.Add(1)
				return m, nil
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Sticky || errors.Is(err, errClosed) {
				return nil, err
			}
			// An image this driver rejects is compiled afresh below.
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errCacheCorrupt) {
			path = "" // unreadable cache directory: compile, don't try to write
		}
	}
	image, err := b.nvrtcCompile(source, name, opts, cubin)
	if err != nil {
		return nil, err
	}
	b.compiles.Add(1)
	m, err := b.loadModule(image, name)
	if err != nil {
		return nil, err
	}
	if path != "" {
		// A cache that cannot be written costs the next run a compile,
		// nothing more.
		_ = writeCacheEntry(path, image)
	}
	return m, nil
}

// nvrtcCompile runs NVRTC and returns the cubin or NUL-terminated PTX.
func (b *Backend) nvrtcCompile(source, name string, opts []string, cubin bool) ([]byte, error) {
	n := &b.nvrtc
	src, nm := cString(source), cString(name)
	var prog uintptr
	r := int(int32(uint32(n.nvrtcCreateProgram.call(uintptr(unsafe.Pointer(&prog)), uintptr(unsafe.Pointer(&src[0])), uintptr(unsafe.Pointer(&nm[0])), 0, 0, 0))))
	if r != 0 {
		return nil, b.nvrtcError("nvrtcCreateProgram", name, r, "")
	}
	defer func() { n.nvrtcDestroyProgram.call(uintptr(unsafe.Pointer(&prog))) }()

	cOpts := make([][]byte, len(opts))
	ptrs := make([]*byte, len(opts)+1) // +1 keeps &ptrs[0] valid with no options
	for i, o := range opts {
		cOpts[i] = cString(o)
		ptrs[i] = &cOpts[i][0]
	}
	r = int(int32(uint32(n.nvrtcCompileProgram.call(prog, uintptr(len(opts)), uintptr(unsafe.Pointer(&ptrs[0]))))))
	runtime.KeepAlive(cOpts)
	runtime.KeepAlive(ptrs)
	if r != 0 {
		return nil, b.nvrtcError("nvrtcCompileProgram", name, r, b.programLog(prog))
	}
	sizeFn, getFn, what := n.nvrtcGetPTXSize, n.nvrtcGetPTX, "nvrtcGetPTX"
	if cubin {
		sizeFn, getFn, what = n.nvrtcGetCUBINSize, n.nvrtcGetCUBIN, "nvrtcGetCUBIN"
	}
	var size uint64
	if r = int(int32(uint32(sizeFn.call(prog, uintptr(unsafe.Pointer(&size)))))); r != 0 {
		return nil, b.nvrtcError(what+"Size", name, r, "")
	}
	if size == 0 {
		return nil, fmt.Errorf("cuda: %s(%s): NVRTC produced an empty image", what, name)
	}
	image := make([]byte, size)
	if r = int(int32(uint32(getFn.call(prog, uintptr(unsafe.Pointer(&image[0])))))); r != 0 {
		return nil, b.nvrtcError(what, name, r, "")
	}
	return image, nil
}

func (b *Backend) programLog(prog uintptr) string {
	var size uint64
	if b.nvrtc.nvrtcGetProgramLogSize.call(prog, uintptr(unsafe.Pointer(&size))) != 0 || size <= 1 {
		return ""
	}
	buf := make([]byte, size)
	if b.nvrtc.nvrtcGetProgramLog.call(prog, uintptr(unsafe.Pointer(&buf[0]))) != 0 {
		return ""
	}
	return goString(&buf[0])
}

func (b *Backend) nvrtcError(call, detail string, r int, log string) error {
	name := resultString(b.nvrtc.nvrtcGetErrorString.call(uintptr(r)))
	return newNVRTCError(call, detail, r, name, log)
}

// loadModule loads a cubin or PTX image into the context.
func (b *Backend) loadModule(image []byte, name string) (*Module, error) {
	if err := b.begin(); err != nil {
		return nil, err
	}
	defer b.end()
	var h uintptr
	r := cuResult(b.drv.cuModuleLoadData.call(uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&image[0]))))
	if err := b.check("cuModuleLoadData", name, r); err != nil {
		return nil, err
	}
	m := &Module{b: b, name: name, handle: h, funcs: map[string]*Function{}}
	b.mu.Lock()
	b.modules[m] = struct{}{}
	b.mu.Unlock()
	return m, nil
}

// Name is the name the module was compiled under.
func (m *Module) Name() string { return m.name }

// Close unloads the module; its Functions can no longer be launched.
// Closing twice is harmless.
func (m *Module) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.handle == 0 {
		return nil
	}
	b := m.b
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	b.mu.Lock()
	delete(b.modules, m)
	b.mu.Unlock()
	// The runs' graphs may hold the module's kernels in their nodes.
	b.runs.drop(b)
	h := m.handle
	m.handle = 0
	return b.check("cuModuleUnload", m.name, cuResult(b.drv.cuModuleUnload.call(h)))
}
