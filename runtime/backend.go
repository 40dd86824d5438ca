package runtime

import (
	"context"

	"github.com/gluaproject/glua/backend"
	"github.com/gluaproject/glua/device"
)

// Backend is what the runtime needs from a device; backends implement it
// and register themselves with the backend package.
type Backend = backend.Backend

// HostMemory is implemented by backends whose memory the host can address
// directly (the CPU backend). The runtime runs the kernels package's Go
// implementations on such memory.
type HostMemory interface {
	// Bytes is the host view of nbytes at p. It stays valid until p is freed.
	Bytes(p device.Ptr, nbytes uint64) []byte
}

// HostQueue is implemented by host backends that record graphs (the CPU
// backend): the runtime's kernels run on their memory directly, so they
// queue each on the stream it belongs to, which runs it now or, while the
// stream records a graph, adds it to the recording. uses are the device
// memory op reads and writes, where the runtime knows it (the built-in
// kernels), for the backend to check the work's order against other
// streams'.
type HostQueue interface {
	Run(s device.Stream, op func() error, uses ...device.Access) error
}

// The optional abilities below are asked of a backend by type assertion,
// so that the runtime imports no backend to learn what it can do.

// LaunchLimiter is implemented by backends that know what a kernel launch
// may ask of the device (both cuda and cpu): the runtime refuses a launch
// beyond the limits before the backend sees it, with the same message on
// each, so that a launch the CPU backend accepts runs on the GPU too.
type LaunchLimiter interface {
	Limits() device.Limits
}

// KernelCompiler is implemented by backends that compile CUDA C at run
// time and launch it (NVRTC: the cuda backend); Runtime.Compile needs it.
type KernelCompiler interface {
	Launcher(source, name string, options []string, entry string) (func(grid, block [3]uint32, shared uint32, s device.Stream, args ...any) error, error)
}

// WorkspaceUser is implemented by backends whose libraries need scratch
// device memory (cuBLAS): the runtime gives them its pool, so that the
// memory is accounted for and limits apply.
type WorkspaceUser interface {
	SetWorkspaceAllocator(alloc func(nbytes uint64, s device.Stream) (device.Ptr, func(), error))
}

// KernelCacher is implemented by backends that compile kernel modules and
// keep them in a disk cache.
type KernelCacher interface {
	KernelCacheStats() (compiles, cacheHits int64)
}

// DeviceCounter is implemented by backends that can say how many devices
// this process may use; one that does not is taken to have one.
type DeviceCounter interface {
	DeviceCount() int
}

// Collectives is implemented by backends that move arrays between the
// processes of one job: NCCL on the cuda backend, a TCP ring between host
// processes on the cpu backend. OpenComm joins the group cfg describes,
// waiting at most cfg.Timeout for the others; ctx cancels the wait.
type Collectives interface {
	OpenComm(ctx context.Context, cfg device.CommConfig) (device.Comm, error)
}

// GraphCapturer is implemented by backends that can record the work queued
// on a stream instead of running it, and replay the recording with one
// launch: CUDA graphs on the cuda backend, a list of operations on the
// CPU backend (which also implements HostQueue, so that the runtime's own
// kernels join the list). Without it a Graph runs its function again at
// each launch.
type GraphCapturer interface {
	// BeginCapture starts recording the work queued on s (not the default
	// stream). Work that would wait for the device or touch host memory is
	// refused with a *device.CaptureError until EndCapture.
	BeginCapture(s device.Stream) error
	// EndCapture stops recording on s, even when it fails, and returns the
	// recording ready to launch and how many operations it holds.
	EndCapture(s device.Stream) (g device.Graph, nodes int, err error)
	// LaunchGraph queues a replay of g on s.
	LaunchGraph(g device.Graph, s device.Stream) error
	// DestroyGraph releases g; a replay in flight still completes.
	DestroyGraph(g device.Graph) error
}
