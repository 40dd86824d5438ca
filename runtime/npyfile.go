package runtime

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"syscall"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/npy"
)

// NPYOptions says how LoadNPY loads a file.
type NPYOptions struct {
	// MMap maps the file read-only instead of reading it (NumPy's
	// mmap_mode="r"): its pages are read as they are touched and belong to
	// the page cache, so a data set larger than the machine's memory can
	// be streamed through the device. The array is read-only and does not
	// count against [host] memory_limit. Where the system cannot map files
	// (npy.CanMap), the file is read into an ordinary array instead.
	MMap bool
	// Pinned reads the file into page-locked memory, as NewHostArray's
	// pinned does. A mapped file is not page-locked memory, so MMap and
	// Pinned together are an error.
	Pinned bool
	// Writable maps the file read-write (NumPy's mmap_mode="r+"): what is
	// written into the array is written into the file. It needs MMap.
	Writable bool
}

// LoadNPY loads a NumPy .npy file: C order, of any dtype glua has (see
// package npy). A 0-d array (a NumPy scalar) loads as one element of
// shape {1}, since glua's arrays have a dimension at least. A read array
// counts against the host memory limit like any host array, so a file too
// large for the machine is a *HostOOMError; every error names the file.
func (rt *Runtime) LoadNPY(path string, opts NPYOptions) (*HostArray, error) {
	if err := rt.usable(); err != nil {
		return nil, err
	}
	if opts.MMap && opts.Pinned {
		return nil, fmt.Errorf("%s: mmap and pinned cannot be combined: a mapped file is the page cache's memory, which cannot be page-locked; choose one", path)
	}
	if opts.Writable {
		if !opts.MMap {
			return nil, fmt.Errorf("%s: writable needs mmap: only a mapped file is written as the array changes", path)
		}
		return rt.mapNPY(path, npy.OpenWritable)
	}
	if opts.MMap && npy.CanMap {
		return rt.mapNPY(path, npy.Open)
	}
	f, err := npy.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	shape := npyShape(f.Shape)
	h, err := rt.NewHostArray(shape, f.DType, opts.Pinned)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := f.ReadData(h.data); err != nil {
		return nil, err
	}
	return h, nil
}

// npyShape is a file's shape as an array's: a 0-d array (a NumPy scalar)
// is one element of shape {1}, since glua's arrays have a dimension at
// least.
func npyShape(shape []int) []int {
	if len(shape) == 0 {
		return []int{1}
	}
	return shape
}

// mapNPY opens path with open and maps its data as a host array.
func (rt *Runtime) mapNPY(path string, open func(string) (*npy.File, error)) (*HostArray, error) {
	if !npy.CanMap {
		return nil, fmt.Errorf("%s: memory-mapping files is not supported on this system", path)
	}
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := f.Map()
	if err != nil {
		return nil, err
	}
	return &HostArray{data: m.Bytes(), shape: npyShape(f.Shape), dtype: f.DType, owner: m}, nil
}

// CreateNPY creates an .npy file of the given shape and dtype, its data
// zero, and maps it read-write (NumPy's open_memmap with mode="w+"): a
// result larger than the machine's memory, batch.Matmul's out among them,
// is written straight into the file. An existing file is replaced; the
// new one appears under path whole, header and zeroed data, or not at
// all.
func (rt *Runtime) CreateNPY(path string, shape []int, dt device.DType) (*HostArray, error) {
	if err := rt.usable(); err != nil {
		return nil, err
	}
	if err := checkShape(shape); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := npy.Create(path, npy.Header{DType: dt, Shape: shape}); err != nil {
		return nil, err
	}
	return rt.mapNPY(path, npy.OpenWritable)
}

// Flush writes what was written into an array mapped read-write from an
// .npy file (LoadNPY with Writable, CreateNPY) to the file now; for any
// other array it does nothing.
func (h *HostArray) Flush() error {
	if m, ok := h.owner.(*npy.Mapping); ok {
		return m.Flush()
	}
	return nil
}

// AnyArray is a *HostArray or an *Array: what SaveNPY writes.
type AnyArray interface {
	Shape() []int
	DType() device.DType
	// inHost is the array's elements in host memory.
	inHost(rt *Runtime) (*HostArray, error)
}

// SaveNPY writes x to path as an .npy file that NumPy reads, in C order;
// a device array is downloaded first, as CopyToHost does. bfloat16 has no
// NumPy dtype and is an error. The file is written under a temporary name
// and renamed into place, so a failure leaves path as it was.
func (rt *Runtime) SaveNPY(path string, x AnyArray) error {
	if err := rt.usable(); err != nil {
		return err
	}
	if x == nil {
		return fmt.Errorf("%s: array is nil", path)
	}
	h, err := x.inHost(rt)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	err = npy.WriteFile(path, npy.Header{DType: h.dtype, Shape: h.shape}, h.data)
	goruntime.KeepAlive(h)
	if m, ok := h.owner.(*npy.Mapping); ok && errors.Is(err, syscall.EFAULT) {
		// The system reads the bytes for write(2) itself, so a page of a
		// truncated file is "bad address" there rather than a fault.
		return fmt.Errorf("%s: the file is left as it was: %w", path, &npy.FaultError{Path: m.Path(), Offset: -1})
	}
	return err
}

func (h *HostArray) inHost(*Runtime) (*HostArray, error) {
	if h == nil {
		return nil, errors.New("array is nil")
	}
	return h, nil
}

// inHost downloads the array, once its dtype is known to be one NumPy
// has: a refusal should not cost a download.
func (a *Array) inHost(rt *Runtime) (*HostArray, error) {
	if err := a.live(rt, "array"); err != nil {
		return nil, err
	}
	if _, err := npy.Descr(a.dtype); err != nil {
		return nil, err
	}
	return a.CopyToHost(nil)
}
