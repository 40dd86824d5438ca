package cuda

import (
	"errors"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// NewStream creates a stream that does not synchronise with the legacy
// default stream (stream 0), so work on it overlaps with other streams.
func (b *Backend) NewStream() (device.Stream, error) {
	if err := b.begin(); err != nil {
		return 0, err
	}
	defer b.end()
	var s uintptr
	if err := b.check("cuStreamCreate", "", cuResult(b.drv.cuStreamCreate.call(uintptr(unsafe.Pointer(&s)), cuStreamNonBlocking))); err != nil {
		return 0, err
	}
	b.mu.Lock()
	b.streams[device.Stream(s)] = struct{}{}
	b.mu.Unlock()
	return device.Stream(s), nil
}

// NewPriorityStream is NewStream at the device's greatest stream
// priority: while both have work, the device starts its blocks before
// those of streams made by NewStream. A collective queued beside a large
// product needs it, since otherwise the product's pending blocks take
// every multiprocessor that frees up, and the collective's blocks wait
// for its last wave: the two run one after the other, not side by side.
// Where the driver has no priorities, it is NewStream.
func (b *Backend) NewPriorityStream() (device.Stream, error) {
	if b.drv.cuStreamCreateWithPriority == 0 || b.drv.cuCtxGetStreamPriorityRange == 0 {
		return b.NewStream()
	}
	if err := b.begin(); err != nil {
		return 0, err
	}
	defer b.end()
	var least, greatest int32
	if err := b.check("cuCtxGetStreamPriorityRange", "", cuResult(b.drv.cuCtxGetStreamPriorityRange.call(uintptr(unsafe.Pointer(&least)), uintptr(unsafe.Pointer(&greatest))))); err != nil {
		return 0, err
	}
	var s uintptr
	if err := b.check("cuStreamCreateWithPriority", "", cuResult(b.drv.cuStreamCreateWithPriority.call(uintptr(unsafe.Pointer(&s)), cuStreamNonBlocking, uintptr(int64(greatest))))); err != nil {
		return 0, err
	}
	b.mu.Lock()
	b.streams[device.Stream(s)] = struct{}{}
	b.mu.Unlock()
	return device.Stream(s), nil
}

// streamPriority is s's priority (lower numbers are greater), for tests.
func (b *Backend) streamPriority(s device.Stream) (int, error) {
	if b.drv.cuStreamGetPriority == 0 {
		return 0, errors.New("this driver has no cuStreamGetPriority")
	}
	if err := b.begin(); err != nil {
		return 0, err
	}
	defer b.end()
	var p int32
	if err := b.check("cuStreamGetPriority", "", cuResult(b.drv.cuStreamGetPriority.call(uintptr(s), uintptr(unsafe.Pointer(&p))))); err != nil {
		return 0, err
	}
	return int(p), nil
}

// DestroyStream destroys a stream from NewStream, with the cuBLAS handle
// bound to it. Work already queued on it still completes. Destroying
// stream 0 is a no-op.
func (b *Backend) DestroyStream(s device.Stream) error {
	if s == 0 {
		return nil
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	b.mu.Lock()
	h := b.handles[s]
	delete(b.handles, s)
	delete(b.streams, s)
	b.mu.Unlock()
	b.runs.drop(b, s)
	var first error
	if h != nil {
		first = b.destroyHandle(h)
	}
	if err := b.check("cuStreamDestroy", "", cuResult(b.drv.cuStreamDestroy.call(uintptr(s)))); err != nil && first == nil {
		first = err
	}
	return first
}

// StreamSynchronize waits for the work queued on s. While a group is open
// the wait watches it (waitStream), since an NCCL kernel whose peer died
// would hold cuStreamSynchronize forever.
func (b *Backend) StreamSynchronize(s device.Stream) error {
	if err := b.refuseInCapture("cuStreamSynchronize", s, false); err != nil {
		return err
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	if b.hasComms() {
		return b.waitStream(s)
	}
	return b.check("cuStreamSynchronize", "", cuResult(b.drv.cuStreamSynchronize.call(uintptr(s))))
}

// NewEvent creates an event that keeps no time, for ordering and waiting.
func (b *Backend) NewEvent() (device.Event, error) {
	return b.newEvent(cuEventDisableTiming)
}

// NewTimingEvent creates an event that keeps the device time, for Elapsed.
func (b *Backend) NewTimingEvent() (device.Event, error) {
	return b.newEvent(cuEventDefault)
}

func (b *Backend) newEvent(flags uintptr) (device.Event, error) {
	if err := b.begin(); err != nil {
		return 0, err
	}
	defer b.end()
	var e uintptr
	if err := b.check("cuEventCreate", "", cuResult(b.drv.cuEventCreate.call(uintptr(unsafe.Pointer(&e)), flags))); err != nil {
		return 0, err
	}
	b.mu.Lock()
	b.events[device.Event(e)] = struct{}{}
	b.mu.Unlock()
	return device.Event(e), nil
}

// DestroyEvent destroys an event from NewEvent.
func (b *Backend) DestroyEvent(e device.Event) error {
	if e == 0 {
		return nil
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	b.mu.Lock()
	delete(b.events, e)
	b.mu.Unlock()
	return b.check("cuEventDestroy", "", cuResult(b.drv.cuEventDestroy.call(uintptr(e))))
}

// Record marks the current end of stream s with e.
func (b *Backend) Record(e device.Event, s device.Stream) error {
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	return b.check("cuEventRecord", "", cuResult(b.drv.cuEventRecord.call(uintptr(e), uintptr(s))))
}

// StreamWaitEvent makes the work queued on s after this call wait for the
// work before e (recorded on another stream) without blocking the host.
func (b *Backend) StreamWaitEvent(s device.Stream, e device.Event) error {
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	return b.check("cuStreamWaitEvent", "", cuResult(b.drv.cuStreamWaitEvent.call(uintptr(s), uintptr(e), 0)))
}

// EventSynchronize waits until the work before e has finished.
func (b *Backend) EventSynchronize(e device.Event) error {
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	if b.hasComms() {
		return b.waitEvent("cuEventSynchronize", uintptr(e))
	}
	return b.check("cuEventSynchronize", "", cuResult(b.drv.cuEventSynchronize.call(uintptr(e))))
}

// EventDone reports whether the work before e has finished, without
// waiting. CUDA_ERROR_NOT_READY is the answer "not yet", not an error.
func (b *Backend) EventDone(e device.Event) (bool, error) {
	if err := b.begin(); err != nil {
		return false, err
	}
	defer b.end()
	switch r := cuResult(b.drv.cuEventQuery.call(uintptr(e))); r {
	case cudaSuccess:
		return true, nil
	case cudaErrorNotReady:
		return false, nil
	default:
		return false, b.driverError("cuEventQuery", "", r)
	}
}

// Elapsed is the device time from start to end in seconds. Both events
// must have completed.
func (b *Backend) Elapsed(start, end device.Event) (float64, error) {
	if err := b.begin(); err != nil {
		return 0, err
	}
	defer b.end()
	f := b.drv.cuEventElapsedTime
	if f == 0 {
		f = b.drv.cuEventElapsedTimeV1
	}
	var ms float32
	if err := b.check("cuEventElapsedTime", "", cuResult(f.call(uintptr(unsafe.Pointer(&ms)), uintptr(start), uintptr(end)))); err != nil {
		return 0, err
	}
	return float64(ms) / 1e3, nil
}
