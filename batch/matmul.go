package batch

import (
	"errors"
	"fmt"
	"io"
	goruntime "runtime"
	"time"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/npy"
	"github.com/gluaproject/glua/runtime"
)

// MatmulOptions tune Matmul.
type MatmulOptions struct {
	// Budget is the device memory the product may use; 0 is what the
	// pool's hard limit leaves free, less room for cuBLAS's workspace and
	// the pool's rounding (freeBudget), or nine tenths of the device's
	// free memory without a hard limit.
	Budget uint64
	// Precision is runtime.MatmulOptions' ("", "default" or "tf32").
	Precision string
	// Out receives the product when not nil (m×n, A's dtype); a
	// memory-mapped array cannot, being read-only.
	Out *runtime.HostArray
	// Verbose, when not nil, is told the tile plan.
	Verbose io.Writer
}

// Matmul computes A·B for host matrices too large to hold on the device at
// once, by tiles, with the next panels uploading on the copy stream while
// the current ones multiply. It is also right, in one tile, when
// everything fits.
func Matmul(rt *runtime.Runtime, A, B *runtime.HostArray, o MatmulOptions) (*runtime.HostArray, error) {
	if A == nil || B == nil {
		return nil, errors.New("A and B must be host arrays")
	}
	if A.NDim() != 2 || B.NDim() != 2 {
		return nil, fmt.Errorf("A and B must be matrices, got %s and %s", A, B)
	}
	m, k, k2, n := A.Shape()[0], A.Shape()[1], B.Shape()[0], B.Shape()[1]
	if k != k2 {
		return nil, fmt.Errorf("A is %dx%d but B is %dx%d; inner dimensions %d and %d differ", m, k, k2, n, k, k2)
	}
	dt := A.DType()
	if B.DType() != dt || !dt.IsFloat() {
		return nil, fmt.Errorf("A and B must have one float dtype, got %s and %s", dt, B.DType())
	}
	if o.Out != nil {
		if s := o.Out.Shape(); o.Out.NDim() != 2 || s[0] != m || s[1] != n || o.Out.DType() != dt {
			return nil, fmt.Errorf("out must be %dx%d %s, got %s", m, n, dt, o.Out)
		}
		if !o.Out.Writable() {
			return nil, errors.New("out is memory-mapped read-only; map it writable (cuda.create_npy, or cuda.load_npy with writable = true)")
		}
		if name := sharing(o.Out, A, B); name != "" {
			// Tiles of C land while later panels of A and B are still to be
			// read: a product cannot be written over its operands.
			return nil, fmt.Errorf("out shares memory with %s; write the product into a separate array", name)
		}
	}
	if m == 0 || n == 0 || k == 0 {
		return emptyProduct(rt, m, k, n, dt, o)
	}
	budget := o.Budget
	if budget == 0 {
		budget = freeBudget(rt)
	}
	p, err := planTiles(m, n, k, dt.Size(), budget, busRatio(dt, o.Precision), multiprocessors(rt))
	if err != nil {
		return nil, err
	}
	if o.Verbose != nil {
		fmt.Fprintf(o.Verbose, "batch.matmul: %s\n", p)
	}
	out := sink{array: func() (*runtime.HostArray, error) { return o.Out, nil }, landed: func(int) {}}
	if o.Out == nil {
		var stop func()
		out, stop = allocate(rt, []int{m, n}, dt, p.tm)
		defer stop()
	}
	start := time.Now()
	live, cached, _ := rt.PinnedStats()
	t, err := newTiler(rt, p, dt, o.Precision, A, B, out)
	if err != nil {
		return nil, err
	}
	defer t.close()
	if o.Verbose != nil {
		// what the pinned memory grew by is what was page-locked anew:
		// the staging's cache hands out memory locked already
		live2, cached2, _ := rt.PinnedStats()
		fmt.Fprintf(o.Verbose, "batch.matmul: A is %s; B is %s; C %s; set up in %.3f s, page-locking %s anew\n",
			t.aSource, t.bSource, t.cSource, time.Since(start).Seconds(), config.FormatSize((live2+cached2)-min(live2+cached2, live+cached)))
	}
	if err := t.run(A, B, out); err != nil {
		return nil, err
	}
	C, err := out.array()
	if err == nil && o.Verbose != nil {
		t.report(o.Verbose, time.Since(start))
	}
	return C, err
}

// report tells w what the plan predicted would cross the bus and what the
// tiles queued, with the product's time and the mean rate that makes.
func (t *tiler) report(w io.Writer, elapsed time.Duration) {
	a, b, c := t.p.traffic()
	moved := t.movedA + t.movedB + t.movedC
	secs := max(elapsed.Seconds(), 1e-9)
	fmt.Fprintf(w, "batch.matmul: bus traffic planned %s up (A %s, B %s) and %s down; moved %s up (A %s, B %s) and %s down in %.3f s, %.1f GB/s on average\n",
		config.FormatSize(a+b), config.FormatSize(a), config.FormatSize(b), config.FormatSize(c),
		config.FormatSize(t.movedA+t.movedB), config.FormatSize(t.movedA), config.FormatSize(t.movedB), config.FormatSize(t.movedC),
		secs, float64(moved)/secs/1e9)
	if t.lockWait > 0 {
		fmt.Fprintf(w, "batch.matmul: waited %.3f s for A and B to be page-locked in place\n", t.lockWait.Seconds())
	}
	if t.slowestLaunch >= slowLaunch && onGPU(t.rt) {
		fmt.Fprintf(w, "batch.matmul: a product of tiles took %.3f s to launch: on a process's first product of this shape, "+
			"the CUDA driver loading cuBLAS's kernel for it (CUDA_MODULE_LOADING=EAGER loads every kernel when the process starts instead)\n",
			t.slowestLaunch.Seconds())
	}
}

// slowLaunch is the launch of a tile's product that verbose reports: a
// launch returns in microseconds, but the first of a shape in a process
// waits while the driver loads its kernel (32-50 ms on an H200's host).
const slowLaunch = 5 * time.Millisecond

// sharing names the first of A and B that shares memory with out, or is
// "".
func sharing(out, A, B *runtime.HostArray) string {
	switch {
	case out.SharesMemory(A):
		return "A"
	case out.SharesMemory(B):
		return "B"
	}
	return ""
}

// emptyProduct is A·B where A or B has no elements: m×n zeros, as NumPy
// gives (no elements at all when m or n is 0), written into out when it
// is given. Nothing is multiplied, but the precision is checked as for
// any product, by the runtime's matmul of empty arrays.
func emptyProduct(rt *runtime.Runtime, m, k, n int, dt runtime.DType, o MatmulOptions) (*runtime.HostArray, error) {
	var empty [3]*runtime.Array
	for i := range empty {
		a, err := rt.DeviceArray([]int{0, 0}, dt)
		if err != nil {
			return nil, err
		}
		defer a.Free()
		empty[i] = a
	}
	if err := rt.Matmul(empty[0], empty[1], empty[2], runtime.MatmulOptions{Precision: o.Precision}); err != nil {
		return nil, err
	}
	if o.Verbose != nil {
		what := "of zeros"
		if m == 0 || n == 0 {
			what = "and empty"
		}
		fmt.Fprintf(o.Verbose, "batch.matmul: %dx%d · %dx%d multiplies nothing: C is %dx%d %s, made on the host\n", m, k, k, n, m, n, what)
	}
	if o.Out == nil {
		return rt.NewHostArray([]int{m, n}, dt, false)
	}
	err := npy.Access(func() { clear(o.Out.Bytes()) }) // out may be a mapped file
	goruntime.KeepAlive(o.Out)                         // a mapping must outlive the writes
	if err != nil {
		return nil, err
	}
	return o.Out, nil
}

// multiprocessors is the GPU's count, or defaultMultiprocessors on a
// backend that is not a GPU, so that the CPU backend plans as the GPU it
// stands in for.
func multiprocessors(rt *runtime.Runtime) int {
	if info, err := rt.Device(); err == nil && info.ComputeCapability[0] > 0 && info.Multiprocessors > 0 {
		return info.Multiprocessors
	}
	return defaultMultiprocessors
}

// onGPU says whether rt runs on a GPU, whose launches queue the work
// (the CPU backend's do it before they return).
func onGPU(rt *runtime.Runtime) bool {
	info, err := rt.Device()
	return err == nil && info.ComputeCapability[0] > 0
}

// freeBudget is what the pool's hard limit leaves, less room for the
// rounding of the plan's buffers into segments and, while the runtime's
// stream has none, for the cuBLAS workspace its first product takes (a
// tenth at most); or nine tenths of the device's free memory where there
// is no limit (other processes may take some of it meanwhile). Under a
// hard limit of 512 MiB with the workspace taken, nine tenths of what was
// left planned 416 MiB for 16384² float32, at 0.84 of in core into a new
// array on an H200, where the 448 MiB that fit once the workspace was
// counted ran at 0.88.
func freeBudget(rt *runtime.Runtime) uint64 {
	s := rt.Stats()
	free := s.DeviceFree
	if _, hard := rt.Limits(); hard > 0 {
		free = min(free+s.Reserved-min(s.Used, s.Reserved), hard-min(s.Used, hard))
		return underHardLimit(free, rt.MatmulWorkspace() > 0)
	}
	return free / 10 * 9
}

// underHardLimit is freeBudget for free bytes under a hard limit, where
// the runtime's stream has its cuBLAS workspace already or not.
func underHardLimit(free uint64, workspace bool) uint64 {
	room := uint64(roundingRoom)
	if !workspace {
		room += workspaceRoom
	}
	return free - min(room, free/10)
}

// workspaceRoom is the workspace cuBLAS takes on a stream's first product
// (the cuda backend's blasWorkspaceBytes, 32 MiB, which batch cannot
// import: with less room it takes a smaller one, or none, for as long as
// the stream lives); roundingRoom, what the plan's five buffers may add
// as the pool rounds their segments up to 2 MiB.
const (
	workspaceRoom = 32 << 20
	roundingRoom  = 10 << 20
)
