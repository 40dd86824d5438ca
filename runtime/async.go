package runtime

import (
	"errors"
	"fmt"

	"github.com/gluaproject/glua/device"
)

// AsyncCopier is implemented by backends that copy between page-locked
// host memory and the device without blocking the host (the cuda backend;
// the CPU backend copies at once, which is as asynchronous as it gets).
type AsyncCopier interface {
	UploadAsync(dst device.Ptr, src []byte, s device.Stream) error
	DownloadAsync(dst []byte, src device.Ptr, s device.Stream) error
}

// errNotPinned is the refusal of an asynchronous copy from or to pageable
// memory, which the driver would make synchronous or read late.
var errNotPinned = errors.New("the host array is not pinned; asynchronous copies need a pinned one (cuda.host_array(shape, dtype, {pinned = true}))")

// CopyFromAsync queues a copy of src into a on stream s (nil: the
// runtime's stream) and returns at once. src must be pinned and must not
// change, nor a be used on another stream, until s has passed this point:
// record an event on s and wait for it (Event.Synchronize on the host,
// Runtime.StreamWait on a stream). The pool keeps a's memory from other
// streams until then, even if a is freed first.
func (a *Array) CopyFromAsync(src *HostArray, s *Stream) error {
	h, ac, err := a.asyncCopy("source", src, s, true)
	if err != nil || a.size == 0 {
		return err
	}
	return ac.UploadAsync(a.ptr(), src.data, h)
}

// CopyToHostAsync queues a copy of a into dst on stream s (nil: the
// runtime's stream) and returns at once; dst holds the data once s has
// passed this point. dst must be pinned, with a's shape and dtype.
func (a *Array) CopyToHostAsync(dst *HostArray, s *Stream) error {
	h, ac, err := a.asyncCopy("destination", dst, s, true)
	if err != nil || a.size == 0 {
		return err
	}
	return ac.DownloadAsync(dst.data, a.ptr(), h)
}

// asyncCopy checks an asynchronous copy between a and host on s, and
// records s's use of a's memory with the pool. pinned says that host must
// be page-locked: a Stager copies from any host array.
func (a *Array) asyncCopy(what string, host *HostArray, s *Stream, pinned bool) (device.Stream, AsyncCopier, error) {
	rt := a.Runtime()
	if err := a.live(rt, ""); err != nil {
		return 0, nil, err
	}
	if err := rt.uncapturable("a copy between host and device"); err != nil {
		return 0, nil, err
	}
	if host == nil {
		return 0, nil, fmt.Errorf("%s is nil", what)
	}
	if err := sameLayout(what, host.shape, host.dtype, "array", a.shape, a.dtype); err != nil {
		return 0, nil, err
	}
	ac, ok := rt.backend.(AsyncCopier)
	if !ok {
		return 0, nil, fmt.Errorf("the %s backend has no asynchronous copies", rt.backend.Name())
	}
	if pinned && !host.pinned {
		return 0, nil, errNotPinned
	}
	h, err := rt.streamHandle(s)
	if err != nil {
		return 0, nil, err
	}
	rt.pool.RecordStream(&a.buf.blk, h)
	rt.xfer.asyncCopies++
	return h, ac, nil
}

// StreamWait makes the work queued on s (nil: the runtime's stream) from
// now on wait for the work before e, without blocking the host: the way
// one stream uses what another produced.
func (rt *Runtime) StreamWait(s *Stream, e *Event) error {
	if err := rt.usable(); err != nil {
		return err
	}
	if e == nil || e.rt != rt {
		return errors.New("the event is nil or belongs to another runtime")
	}
	h, err := rt.streamHandle(s)
	if err != nil {
		return err
	}
	return rt.backend.StreamWaitEvent(h, e.handle)
}

// streamHandle is s's handle, or the runtime's stream's for nil.
func (rt *Runtime) streamHandle(s *Stream) (device.Stream, error) {
	if s == nil {
		return rt.streams.own, nil
	}
	if s.rt != rt {
		return 0, errors.New("the stream belongs to another runtime")
	}
	return s.handle, nil
}

// CopyStream is a stream for transfers that overlap the runtime's own
// work, made on first use and kept until Close, so that every batch
// iterator shares one instead of each making a stream that lives as long
// as the runtime.
func (rt *Runtime) CopyStream() (*Stream, error) {
	return rt.sharedStream(&rt.xfer.copyStream)
}

// DownloadStream is a second such stream, for downloads that overlap the
// copy stream's uploads as well as the runtime's work (batch.Matmul's
// tiles of C): the bus carries both directions at once, and on one stream
// an upload would wait for the download queued before it.
func (rt *Runtime) DownloadStream() (*Stream, error) {
	return rt.sharedStream(&rt.xfer.downloadStream)
}

func (rt *Runtime) sharedStream(s **Stream) (*Stream, error) {
	if *s == nil {
		made, err := rt.NewStream()
		if err != nil {
			return nil, err
		}
		*s = made
	}
	return *s, nil
}
