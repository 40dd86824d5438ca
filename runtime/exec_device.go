package runtime

import (
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
)

// deviceExec runs the built-in CUDA kernels. Reductions take their scratch
// from the pool (a cached block, so no driver call) and return it at once.
type deviceExec struct {
	gpu *kernels.GPU
	rt  *Runtime // its pool and stream are set after the executor is made
}

func newDeviceExec(rt *Runtime, d kernels.Device) *deviceExec {
	return &deviceExec{gpu: kernels.NewGPU(d), rt: rt}
}

func (e *deviceExec) stream() device.Stream { return e.rt.streams.own }

func (e *deviceExec) fill(x span, v float64) error {
	return e.gpu.Fill(x.dtype, x.ptr, v, x.n, e.stream())
}

func (e *deviceExec) elementwise(op *kernels.ElementwiseOp, out, y span, a float64, x span) error {
	return e.gpu.ElementwiseTo(op, y.dtype, out.ptr, y.ptr, a, x.ptr, y.n, e.stream())
}

func (e *deviceExec) copy(dst, src span) error {
	return e.gpu.Copy(dst.dtype, dst.ptr, src.dtype, src.ptr, dst.n, e.stream())
}

func (e *deviceExec) rand(x span, seed, offset uint64) error {
	return e.gpu.Rand(x.dtype, x.ptr, seed, offset, x.n, e.stream())
}

func (e *deviceExec) randn(x span, seed, offset uint64) error {
	return e.gpu.RandN(x.dtype, x.ptr, seed, offset, x.n, e.stream())
}

func (e *deviceExec) sum(x span) (float64, error) {
	return e.reduce(x.n, func(scratch device.Ptr) (float64, error) {
		return e.gpu.Sum(x.dtype, x.ptr, x.n, scratch, e.stream())
	})
}

func (e *deviceExec) norm(x span) (float64, error) {
	return e.reduce(x.n, func(scratch device.Ptr) (float64, error) {
		return e.gpu.Norm(x.dtype, x.ptr, x.n, scratch, e.stream())
	})
}

func (e *deviceExec) maxAbsDiff(x, y span) (float64, error) {
	return e.reduce(x.n, func(scratch device.Ptr) (float64, error) {
		return e.gpu.MaxAbsDiff(x.dtype, x.ptr, y.ptr, x.n, scratch, e.stream())
	})
}

func (e *deviceExec) reduce(n int, run func(scratch device.Ptr) (float64, error)) (float64, error) {
	rt := e.rt
	b, err := rt.allocOwn(scratchSite, kernels.ReduceScratchBytes(n))
	if err != nil {
		return 0, err
	}
	v, err := run(b.Ptr)
	if ferr := rt.freeOwn(rt.pool, scratchSite, b); err == nil {
		err = ferr
	}
	return v, err
}

// KernelCacheStats reports how many kernel modules this runtime's backend
// compiled with NVRTC and how many it loaded from the disk cache; both are
// 0 on the CPU backend, which compiles nothing. On a Shared backend the
// counts (and the loaded modules) are shared by every runtime on it.
func (rt *Runtime) KernelCacheStats() (compiles, cacheHits int64) {
	if c, ok := rt.backend.(KernelCacher); ok {
		return c.KernelCacheStats()
	}
	return 0, 0
}
