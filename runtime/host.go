package runtime

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"unsafe"

	"github.com/gluaproject/glua/arraytext"
	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
	"github.com/gluaproject/glua/npy"
)

// HostArray is an n-dimensional row-major array in host memory: the source
// and destination of transfers. Its elements are stored as the dtype's bits
// (float16 and bfloat16 as 2 bytes), so a transfer is one copy.
type HostArray struct {
	data   []byte
	shape  []int
	dtype  device.DType
	pinned bool
	// owner keeps the memory behind data alive while this array or a view
	// of it is reachable: page-locked memory (*pinnedMem), a mapped .npy
	// file (*npy.Mapping, which makes the array read-only) or the mapped
	// memory of a download's new array (*downloadPages); nil for ordinary
	// Go memory.
	owner any
}

// NewHostArray returns a zeroed host array for transfers to and from this
// runtime's device. Pinned (page-locked) memory makes transfers faster and
// lets them overlap computation; on the CPU backend every host array is
// already as fast as it gets, so pinned is recorded and otherwise ignored.
func (rt *Runtime) NewHostArray(shape []int, dt device.DType, pinned bool) (*HostArray, error) {
	return rt.newHostArray(shape, dt, pinned, true)
}

// NewStaging returns a pinned host array of n elements whose contents are
// whatever its memory last held, for a staging buffer that is written
// before it is read: zeroing the hundreds of megabytes batch.Matmul stages
// through would cost a pass over them on every call.
func (rt *Runtime) NewStaging(n int, dt device.DType) (*HostArray, error) {
	return rt.newHostArray([]int{n}, dt, true, false)
}

func (rt *Runtime) newHostArray(shape []int, dt device.DType, pinned, zero bool) (*HostArray, error) {
	nbytes, err := rt.arrayBytes(shape, dt)
	if err != nil {
		return nil, err
	}
	if err := rt.reserveHost(nbytes); err != nil {
		return nil, err
	}
	if !pinned {
		h, err := NewHostArray(shape, dt)
		if err != nil {
			return nil, err
		}
		return rt.trackHost(h), nil
	}
	buf, owner, ok, err := rt.newPinned(nbytes, zero)
	if err != nil {
		return nil, err
	}
	if !ok {
		h, err := NewHostArray(shape, dt)
		if err != nil {
			return nil, err
		}
		h.pinned = true
		return rt.trackHost(h), nil
	}
	return rt.trackHost(&HostArray{data: buf, shape: append([]int(nil), shape...), dtype: dt, pinned: true, owner: owner}), nil
}

// Pinned reports whether the array was asked for as page-locked memory.
func (h *HostArray) Pinned() bool { return h.pinned }

// Mapped reports whether the array is a memory-mapped .npy file
// (LoadNPY with MMap, CreateNPY): read-only unless mapped writable.
func (h *HostArray) Mapped() bool {
	_, ok := h.owner.(*npy.Mapping)
	return ok
}

// Writable reports whether the array may be written into: every array but
// one mapped read-only from an .npy file.
func (h *HostArray) Writable() bool { return h.readOnly() == nil }

// readOnly says why the array cannot be written into, or nil when it can.
func (h *HostArray) readOnly() error {
	if m, ok := h.owner.(*npy.Mapping); ok && !m.Writable() {
		return fmt.Errorf("read-only: memory-mapped from %s; map it writable (or load it without mmap) to write into it", m.Path())
	}
	return nil
}

// NewHostArray returns a zeroed host array, or a *HostOOMError when the
// machine cannot give that much.
func NewHostArray(shape []int, dt device.DType) (*HostArray, error) {
	if !dt.Valid() {
		return nil, fmt.Errorf("invalid dtype %s", dt)
	}
	if err := checkShape(shape); err != nil {
		return nil, err
	}
	n := product(shape) * dt.Size()
	if err := checkHost(uint64(n)); err != nil {
		return nil, err
	}
	return &HostArray{data: make([]byte, n), shape: append([]int(nil), shape...), dtype: dt}, nil
}

// HostArrayOf wraps existing bytes, which must hold exactly the shape's
// elements of dt. The array shares data with the caller.
func HostArrayOf(data []byte, shape []int, dt device.DType) (*HostArray, error) {
	if !dt.Valid() {
		return nil, fmt.Errorf("invalid dtype %s", dt)
	}
	if err := checkShape(shape); err != nil {
		return nil, err
	}
	if want := product(shape) * dt.Size(); len(data) != want {
		return nil, fmt.Errorf("%d bytes given for a %s array of shape %s, which needs %d", len(data), dt, shapeString(shape), want)
	}
	return &HostArray{data: data, shape: append([]int(nil), shape...), dtype: dt}, nil
}

// HostArrayFromFloats builds a host array from values, converting each to
// dt: a float rounds to a narrower float, and an integer dtype truncates
// toward zero a value in its range and refuses any other
// (device.CheckValue), naming the element.
func HostArrayFromFloats(values []float64, shape []int, dt device.DType) (*HostArray, error) {
	h, err := NewHostArray(shape, dt)
	if err != nil {
		return nil, err
	}
	if len(values) != h.Size() {
		return nil, fmt.Errorf("%d values given for shape %s, which holds %d", len(values), shapeString(shape), h.Size())
	}
	for i, v := range values {
		if err := device.CheckValue(dt, v); err != nil {
			return nil, fmt.Errorf("element %s: %w", elementName(shape, i), err)
		}
		device.Set(dt, h.data, i, v)
	}
	return h, nil
}

func (h *HostArray) Shape() []int        { return append([]int(nil), h.shape...) }
func (h *HostArray) DType() device.DType { return h.dtype }
func (h *HostArray) Size() int           { return len(h.data) / h.dtype.Size() }
func (h *HostArray) NBytes() uint64      { return uint64(len(h.data)) }
func (h *HostArray) NDim() int           { return len(h.shape) }

// Bytes is the array's storage, shared, not copied. Pinned storage belongs to
// the driver and is returned to it once h is unreachable, a mapped file
// is unmapped then, and the memory of an array of 4 MiB or more that
// CopyToHost made goes to the next such array, so keep h alive
// (runtime.KeepAlive) for as long as the bytes are used. A mapped array's bytes are read-only unless
// mapped writable, and may fault where another program truncated the
// file: touch them inside npy.Access, which makes that fault an error.
func (h *HostArray) Bytes() []byte { return h.data }

// Get returns element i (0-based, flat) as a float64.
func (h *HostArray) Get(i int) (float64, error) {
	if i < 0 || i >= h.Size() {
		return 0, fmt.Errorf("index %d out of range [0, %d)", i, h.Size())
	}
	var v float64
	err := h.access(func() { v = device.Get(h.dtype, h.data, i) })
	return v, err
}

// Set stores v, converted to the dtype, at flat index i (0-based). An
// integer dtype refuses a number beyond its range, NaN and the infinities
// (device.CheckValue).
func (h *HostArray) Set(i int, v float64) error {
	if i < 0 || i >= h.Size() {
		return fmt.Errorf("index %d out of range [0, %d)", i, h.Size())
	}
	if err := device.CheckValue(h.dtype, v); err != nil {
		return err
	}
	if err := h.readOnly(); err != nil {
		return fmt.Errorf("the array is %w", err)
	}
	return h.access(func() { device.Set(h.dtype, h.data, i, v) })
}

// Convert returns a new host array of h's elements in dtype dt, each
// converted as kernels.copy converts across dtypes: an integer dtype
// truncates toward zero and saturates, NaN becoming 0.
func (h *HostArray) Convert(dt device.DType) (*HostArray, error) {
	c, err := NewHostArray(h.shape, dt)
	if err != nil {
		return nil, err
	}
	if err := h.access(func() { kernels.Copy(dt, c.data, h.dtype, h.data) }); err != nil {
		return nil, err
	}
	return c, nil
}

// Float64s returns every element as float64, in row-major order; a
// mapped file that can no longer be read is an *npy.FaultError.
func (h *HostArray) Float64s() ([]float64, error) {
	out := make([]float64, h.Size())
	err := h.access(func() {
		for i := range out {
			out[i] = device.Get(h.dtype, h.data, i)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Floats is Float64s for an array known to be readable: one in memory,
// or a mapped file nothing truncates. A fault on a mapped file panics
// with the *npy.FaultError.
func (h *HostArray) Floats() []float64 {
	out, err := h.Float64s()
	if err != nil {
		panic(err)
	}
	return out
}

// access runs fn, which touches h's bytes. When they are a mapped file's,
// a page of it that cannot be had (the file was truncated, or a hole in
// it meets a full file system) ends fn with an *npy.FaultError instead of
// killing the process; fn must not start goroutines that touch them.
func (h *HostArray) access(fn func()) error { return accessAll(fn, h) }

// accessAll is access for fn touching the bytes of several arrays (nil
// ones are skipped).
func accessAll(fn func(), arrays ...*HostArray) error {
	for _, h := range arrays {
		if h != nil && h.Mapped() {
			err := npy.Access(fn)
			goruntime.KeepAlive(arrays) // the mappings must outlive fn's reads
			return err
		}
	}
	fn()
	return nil
}

// Reshape returns a view with another shape of the same size; one dimension
// may be -1 and is then inferred.
func (h *HostArray) Reshape(shape []int) (*HostArray, error) {
	shape, err := inferShape(shape, h.Size(), h.shape)
	if err != nil {
		return nil, err
	}
	return h.view(h.data, shape), nil
}

// Rows returns a view of rows i through j (1-based, inclusive) of the first
// dimension.
func (h *HostArray) Rows(i, j int) (*HostArray, error) {
	off, n, shape, err := rowsView(h.shape, h.dtype, i, j)
	if err != nil {
		return nil, err
	}
	return h.view(h.data[off:off+n], shape), nil
}

// Row returns row i (1-based, as Rows) of the first dimension as a view
// with the remaining dimensions: Lua's h[i]. The array must have two
// dimensions or more; a 1-D array's elements are read with Get.
func (h *HostArray) Row(i int) (*HostArray, error) {
	off, shape, err := rowView(h.shape, h.dtype, i)
	if err != nil {
		return nil, err
	}
	return h.view(h.data[off:off+product(shape)*h.dtype.Size()], shape), nil
}

// SharesMemory reports whether h and o share any byte of memory: one is
// a view of the other, or both view parts of one array that meet.
func (h *HostArray) SharesMemory(o *HostArray) bool {
	if h == nil || o == nil || len(h.data) == 0 || len(o.data) == 0 {
		return false
	}
	hp, op := uintptr(unsafe.Pointer(unsafe.SliceData(h.data))), uintptr(unsafe.Pointer(unsafe.SliceData(o.data)))
	return hp < op+uintptr(len(o.data)) && op < hp+uintptr(len(h.data))
}

// view is an array over part of h's memory, sharing its owner.
func (h *HostArray) view(data []byte, shape []int) *HostArray {
	return &HostArray{data: data, shape: shape, dtype: h.dtype, pinned: h.pinned, owner: h.owner}
}

// String reads like HostArray<float32>[2x3] 24 B.
func (h *HostArray) String() string {
	return fmt.Sprintf("HostArray<%s>[%s] %s", h.dtype, shapeString(h.shape), config.FormatSize(h.NBytes()))
}

// Repr is String followed, on the lines below, by the array's elements
// as package arraytext writes them (NumPy's repr). Only a mapped file that
// can no longer be read is an error.
func (h *HostArray) Repr() (string, error) {
	size := h.dtype.Size()
	text, err := arraytext.Format(h.shape, h.dtype, func(dst []byte, start, count int) error {
		return h.access(func() { copy(dst, h.data[start*size:(start+count)*size]) })
	})
	if err != nil {
		return "", err
	}
	return h.String() + "\n" + text, nil
}

// inferShape checks a new shape for an array of size elements, resolving a
// single -1.
func inferShape(shape []int, size int, old []int) ([]int, error) {
	if err := device.CheckDims(len(shape)); err != nil {
		return nil, err
	}
	shape = append([]int(nil), shape...)
	infer := -1
	known := 1
	for i, d := range shape {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d == -1:
			return nil, errors.New("only one dimension may be -1")
		case d < 0:
			return nil, fmt.Errorf("shape[%d] is %d; dimensions cannot be negative", i+1, d)
		default:
			n, ok := mulElements(uint64(known), uint64(d))
			if !ok {
				return nil, fmt.Errorf("shape %s is too large", shapeString(shape))
			}
			known = int(n)
		}
	}
	if len(shape) == 0 {
		return nil, errors.New("shape must have at least one dimension")
	}
	if infer >= 0 {
		if known == 0 || size%known != 0 {
			return nil, fmt.Errorf("cannot reshape %s (%d elements) to %s", shapeString(old), size, shapeString(shape))
		}
		shape[infer] = size / known
	}
	if product(shape) != size {
		return nil, fmt.Errorf("cannot reshape %s (%d elements) to %s (%d elements)", shapeString(old), size, shapeString(shape), product(shape))
	}
	return shape, nil
}

// rowView is the byte offset and shape of row i (1-based) of an array.
func rowView(shape []int, dt device.DType, i int) (off int, out []int, err error) {
	if len(shape) < 2 {
		return 0, nil, fmt.Errorf("a 1-D array has no rows, only elements")
	}
	if i < 1 || i > shape[0] {
		return 0, nil, fmt.Errorf("row %d out of range: the array has rows 1 to %d", i, shape[0])
	}
	out = append([]int(nil), shape[1:]...)
	return (i - 1) * product(out) * dt.Size(), out, nil
}

// rowsView is the byte offset, byte length and shape of rows i..j (1-based,
// inclusive) of an array.
func rowsView(shape []int, dt device.DType, i, j int) (off, n int, out []int, err error) {
	rows := shape[0]
	if i < 1 || j > rows || i > j+1 {
		return 0, 0, nil, fmt.Errorf("rows %d to %d out of range: the array has rows 1 to %d", i, j, rows)
	}
	rowBytes := product(shape[1:]) * dt.Size()
	out = append([]int{j - i + 1}, shape[1:]...)
	return (i - 1) * rowBytes, (j - i + 1) * rowBytes, out, nil
}

// elementName is flat element i of an array of the given shape as a Lua
// script indexes it, [2][1], counting from 1.
func elementName(shape []int, i int) string {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = i % shape[d]
			i /= shape[d]
		}
	}
	var b strings.Builder
	for _, k := range idx {
		fmt.Fprintf(&b, "[%d]", k+1)
	}
	return b.String()
}
