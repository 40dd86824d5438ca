package cuda

import (
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// RegisterHostMemory sets whether AllocHost page-locks mapped memory in
// place, until restore is called.
func RegisterHostMemory(on bool) (restore func()) {
	was := registerHostMemory
	registerHostMemory = on
	return func() { registerHostMemory = was }
}

// MappedHost reports whether buf, from AllocHost, is mapped memory
// page-locked in place.
func (b *Backend) MappedHost(buf []byte) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, ok := b.pinned.Get(hostBuffer{base: uintptr(unsafe.Pointer(unsafe.SliceData(buf)))})
	return ok && h.mapped != nil
}

// StreamPriority is s's priority; lower numbers are greater.
func (b *Backend) StreamPriority(s device.Stream) (int, error) { return b.streamPriority(s) }

// PlannedShapes is how many product shapes run through a cuBLASLt plan.
func (b *Backend) PlannedShapes() int {
	b.lt.mu.Lock()
	defer b.lt.mu.Unlock()
	return b.lt.planned()
}

// PlanSmallProducts sets whether small products may go through cuBLASLt
// (when it loaded), until restore is called.
func (b *Backend) PlanSmallProducts(on bool) (restore func()) {
	b.lt.mu.Lock()
	was := b.lt.loaded
	b.lt.loaded = on && was
	b.lt.mu.Unlock()
	return func() {
		b.lt.mu.Lock()
		b.lt.loaded = was
		b.lt.mu.Unlock()
	}
}

// LaunchRaw queues f n times straight through cuLaunchKernel, within one
// begin and with the arguments marshalled once, and with setContext also
// makes the context current before each: the driver's own cost per
// launch, beside Launch's.
func (b *Backend) LaunchRaw(f *Function, n int, grid, block [3]uint32, s device.Stream, setContext bool, args ...any) error {
	slots := make([]uint64, len(args))
	if err := marshalArgs(slots, args); err != nil {
		return err
	}
	params := make([]unsafe.Pointer, len(slots)+1)
	for i := range slots {
		params[i] = unsafe.Pointer(&slots[i])
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	for range n {
		if setContext {
			if r := cuResult(b.drv.cuCtxSetCurrent.call(b.ctx)); r != cudaSuccess {
				return b.check("cuCtxSetCurrent", "", r)
			}
		}
		r := cuResult(b.drv.cuLaunchKernel.call(f.handle,
			uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
			uintptr(block[0]), uintptr(block[1]), uintptr(block[2]),
			0, uintptr(s), uintptr(unsafe.Pointer(&params[0])), 0))
		if r != cudaSuccess {
			return b.check("cuLaunchKernel", f.name, r)
		}
	}
	return nil
}

// QueuedLaunches is how many launches the launch queue's worker has given
// the driver, and false where the backend has no queue.
func (b *Backend) QueuedLaunches() (int64, bool) {
	if b.launches == nil {
		return 0, false
	}
	return b.launches.issued.Load(), true
}

// GraphRuns is how many runs of queued launches the worker gave the
// driver as graphs, and how many launches they held.
func (b *Backend) GraphRuns() (runs, launches int64) {
	return b.runs.runs.Load(), b.runs.launches.Load()
}

// LaunchQueueWanted says whether Load starts a launch queue here.
func LaunchQueueWanted() bool { return launchQueueWanted() }

// LauncherFunction is the Function a Launcher of entry launches.
func (b *Backend) LauncherFunction(source, name string, options []string, entry string) (*Function, error) {
	return b.launcherFunction(source, name, options, entry)
}

// Carveout is f's preferred shared memory carveout in percent, as the
// driver reports it.
func (b *Backend) Carveout(f *Function) (int, error) {
	var v int32
	r := cuResult(b.drv.cuFuncGetAttribute.call(uintptr(unsafe.Pointer(&v)), funcAttrPreferredCarveout, f.handle))
	return int(v), b.check("cuFuncGetAttribute", f.name+" PREFERRED_SHARED_MEMORY_CARVEOUT", r)
}
