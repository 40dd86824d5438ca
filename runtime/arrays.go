package runtime

import (
	"fmt"
	goruntime "runtime"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/npy"
)

// DeviceArray allocates an uninitialised array (Numba's device_array).
func (rt *Runtime) DeviceArray(shape []int, dt device.DType) (*Array, error) {
	buf, err := rt.alloc(shape, dt)
	if err != nil {
		return nil, err
	}
	return newArray(buf, 0, buf.shape, dt, false), nil
}

// Full allocates an array with every element set to v.
func (rt *Runtime) Full(shape []int, v float64, dt device.DType) (*Array, error) {
	a, err := rt.DeviceArray(shape, dt)
	if err != nil {
		return nil, err
	}
	if err := rt.Fill(a, v); err != nil {
		a.Free()
		return nil, err
	}
	return a, nil
}

// Zeros allocates an array of zeros.
func (rt *Runtime) Zeros(shape []int, dt device.DType) (*Array, error) {
	a, err := rt.DeviceArray(shape, dt)
	if err != nil {
		return nil, err
	}
	if a.size == 0 {
		return a, nil
	}
	if err := rt.backend.Memset(a.ptr(), 0, a.NBytes(), rt.streams.own); err != nil {
		a.Free()
		return nil, err
	}
	return a, nil
}

// ToDevice uploads a host array into a new device array of the same dtype.
func (rt *Runtime) ToDevice(h *HostArray) (*Array, error) {
	if h == nil {
		return nil, fmt.Errorf("source is nil")
	}
	if err := rt.uncapturable("a copy from the host"); err != nil {
		return nil, err
	}
	a, err := rt.DeviceArray(h.shape, h.dtype)
	if err != nil {
		return nil, err
	}
	err = a.upload(h)
	if err != nil {
		a.Free()
		return nil, err
	}
	return a, nil
}

// CopyToHost downloads the array. With dst nil it returns a new host array
// (from 4 MiB, memory reused from dropped ones: see HostArray.Bytes);
// otherwise dst must have the same shape and dtype and is filled. A large
// pageable dst is filled through a Stager's pinned slots.
func (a *Array) CopyToHost(dst *HostArray) (*HostArray, error) {
	rt := a.Runtime()
	if err := a.live(rt, ""); err != nil {
		return nil, err
	}
	if dst == nil {
		var err error
		if dst, err = rt.newDownloadArray(a.shape, a.dtype); err != nil {
			return nil, err
		}
	} else if err := sameLayout("destination", dst.shape, dst.dtype, "array", a.shape, a.dtype); err != nil {
		return nil, err
	} else if err := dst.readOnly(); err != nil {
		return nil, fmt.Errorf("destination is %w", err)
	}
	if a.size == 0 {
		return dst, nil
	}
	if err := rt.uncapturable("a copy to the host"); err != nil {
		return nil, err
	}
	if err := rt.downloadInto(dst, a.ptr()); err != nil {
		return nil, err
	}
	return dst, nil
}

// CopyFrom uploads src into the array's existing memory: no allocation. src
// must have the same shape and dtype.
func (a *Array) CopyFrom(src *HostArray) error {
	rt := a.Runtime()
	if err := a.live(rt, ""); err != nil {
		return err
	}
	if src == nil {
		return fmt.Errorf("source is nil")
	}
	if err := sameLayout("source", src.shape, src.dtype, "array", a.shape, a.dtype); err != nil {
		return err
	}
	return a.upload(src)
}

// upload copies h's bytes into the array; an empty array has no memory to
// copy into, nor a valid address. Pageable bytes go through a Stager when
// there are enough of them. A mapped file's bytes are only ever read by
// Go code (the Stager's threads, or bounced here), where a page that
// cannot be had is an error: read by the driver's own copy, it would end
// the process.
func (a *Array) upload(h *HostArray) error {
	defer goruntime.KeepAlive(h) // pinned or mapped memory must outlive the copy
	if a.size == 0 {
		return nil
	}
	rt := a.buf.rt
	if err := rt.uncapturable("a copy from the host"); err != nil {
		return err
	}
	if !h.pinned {
		if staged, err := rt.stagedUpload(a, h.data); staged {
			return err
		}
	}
	if h.Mapped() {
		return bounce(h.data, func(lo int, buf []byte) error {
			return rt.backend.Upload(a.ptr()+device.Ptr(lo), buf, rt.streams.own)
		}, true)
	}
	return rt.backend.Upload(a.ptr(), h.data, rt.streams.own)
}

// downloadInto copies dst's size in bytes from src into dst; pageable
// bytes go through a Stager when there are enough of them, and a mapped
// file's are written by Go code, as upload reads them.
func (rt *Runtime) downloadInto(dst *HostArray, src device.Ptr) error {
	defer goruntime.KeepAlive(dst)
	if !dst.pinned {
		if staged, err := rt.stagedDownload(dst.data, src); staged {
			return err
		}
	}
	if dst.Mapped() {
		return bounce(dst.data, func(lo int, buf []byte) error {
			return rt.backend.Download(buf, src+device.Ptr(lo), rt.streams.own)
		}, false)
	}
	return rt.backend.Download(dst.data, src, rt.streams.own)
}

// bounce copies a mapped file's bytes in pieces through a buffer of Go
// memory, with each piece's copy between the buffer and data done inside
// npy.Access. move copies the piece at byte lo between buf and the device
// (synchronously, so that buf may be reused): after the Go copy for an
// upload, before it for a download.
func bounce(data []byte, move func(lo int, buf []byte) error, upload bool) error {
	buf := make([]byte, min(len(data), stageChunk))
	for lo := 0; lo < len(data); lo += len(buf) {
		hi := min(lo+len(buf), len(data))
		piece := buf[:hi-lo]
		if upload {
			if err := npy.Access(func() { copy(piece, data[lo:hi]) }); err != nil {
				return err
			}
		}
		if err := move(lo, piece); err != nil {
			return err
		}
		if !upload {
			if err := npy.Access(func() { copy(data[lo:hi], piece) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyDevice copies src into dst (same size), skipping empty copies.
func (rt *Runtime) copyDevice(dst, src *Array) error {
	if dst.size == 0 {
		return nil
	}
	return rt.exec.copy(dst.span(), src.span())
}

// CopyFromDevice copies another device array of the same shape and dtype
// into this one's memory. src may overlap it: the array gets what src held
// before the call.
func (a *Array) CopyFromDevice(src *Array) error {
	rt := a.Runtime()
	if err := a.live(rt, ""); err != nil {
		return err
	}
	if err := src.live(rt, "source"); err != nil {
		return err
	}
	if err := sameLayout("source", src.shape, src.dtype, "array", a.shape, a.dtype); err != nil {
		return err
	}
	return rt.copyArray(a, "array", src, "source")
}

// copyArray copies src into dst, of one shape and dtype, as if src were
// read before dst is written: nothing is done when they are the same
// memory, and a partial overlap goes through a temporary, since the copy
// kernel's threads read and write their elements in no set order.
func (rt *Runtime) copyArray(dst *Array, dstName string, src *Array, srcName string) error {
	switch {
	case sameMemory(dst, src):
		return nil
	case partlyOverlaps(dst, src):
		return rt.throughTemporary(dst, dstName, src, srcName, func(tmp *Array) error { return rt.copyDevice(tmp, src) })
	}
	return rt.copyDevice(dst, src)
}

// Reshape returns a view with another shape of the same size; one dimension
// may be -1 and is then inferred.
func (a *Array) Reshape(shape []int) (*Array, error) {
	if err := a.live(a.Runtime(), ""); err != nil {
		return nil, err
	}
	shape, err := inferShape(shape, a.size, a.shape)
	if err != nil {
		return nil, err
	}
	return newArray(a.buf, a.offset, shape, a.dtype, true), nil
}

// Rows returns a view of rows i through j (1-based, inclusive) of the first
// dimension, sharing memory with a.
func (a *Array) Rows(i, j int) (*Array, error) {
	if err := a.live(a.Runtime(), ""); err != nil {
		return nil, err
	}
	off, _, shape, err := rowsView(a.shape, a.dtype, i, j)
	if err != nil {
		return nil, err
	}
	return newArray(a.buf, a.offset+uint64(off), shape, a.dtype, true), nil
}

// Row returns row i (1-based, as Rows) of the first dimension as a view
// with the remaining dimensions, sharing memory with a: Lua's a[i]. The
// array must have two dimensions or more; a 1-D array's elements are
// read with Get.
func (a *Array) Row(i int) (*Array, error) {
	if err := a.live(a.Runtime(), ""); err != nil {
		return nil, err
	}
	off, shape, err := rowView(a.shape, a.dtype, i)
	if err != nil {
		return nil, err
	}
	return newArray(a.buf, a.offset+uint64(off), shape, a.dtype, true), nil
}

// Get downloads element i (0-based, of the flat row-major elements) as a
// float64: a copy of a few bytes, which waits for the work queued before
// it. A loop over many elements copies the array to the host once
// instead.
func (a *Array) Get(i int) (float64, error) {
	if err := a.element(i); err != nil {
		return 0, err
	}
	var buf [8]byte
	if err := a.download(buf[:], i, 1); err != nil {
		return 0, err
	}
	return device.Get(a.dtype, buf[:], 0), nil
}

// Set writes v, converted to the dtype as HostArray.Set converts it, into
// element i (0-based, flat), in order with the work queued before it. It
// is a fill of that one element, queued like any kernel: the value goes
// with the launch, so the host does not wait, and a graph records it.
func (a *Array) Set(i int, v float64) error {
	if err := a.element(i); err != nil {
		return err
	}
	if err := device.CheckValue(a.dtype, v); err != nil {
		return err
	}
	size := a.dtype.Size()
	return a.buf.rt.exec.fill(span{ptr: a.ptr() + device.Ptr(i*size), n: 1, dtype: a.dtype}, v)
}

// element checks that a is live and has a flat element i.
func (a *Array) element(i int) error {
	if err := a.live(a.Runtime(), ""); err != nil {
		return err
	}
	if i < 0 || i >= a.size {
		return fmt.Errorf("index %d out of range [0, %d)", i, a.size)
	}
	return nil
}

// Clone returns a new array holding a copy of a's data.
func (a *Array) Clone() (*Array, error) {
	rt := a.Runtime()
	if err := a.live(rt, ""); err != nil {
		return nil, err
	}
	c, err := rt.DeviceArray(a.shape, a.dtype)
	if err != nil {
		return nil, err
	}
	if err := rt.copyDevice(c, a); err != nil {
		c.Free()
		return nil, err
	}
	return c, nil
}

// Float64s downloads the array's elements as float64, row-major.
func (a *Array) Float64s() ([]float64, error) {
	h, err := a.CopyToHost(nil)
	if err != nil {
		return nil, err
	}
	return h.Floats(), nil
}

func sameLayout(aname string, ashape []int, adt device.DType, bname string, bshape []int, bdt device.DType) error {
	if adt != bdt {
		return fmt.Errorf("%s is %s but %s is %s", aname, adt, bname, bdt)
	}
	if !equalShape(ashape, bshape) {
		return fmt.Errorf("%s is %s but %s is %s", aname, shapeString(ashape), bname, shapeString(bshape))
	}
	return nil
}

func equalShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
