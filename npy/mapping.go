package npy

import (
	"errors"
	"fmt"
	"math"
	"runtime"
)

// Mapping is an .npy file's data mapped into memory (NumPy's
// mmap_mode="r", or "r+" for a file opened by OpenWritable or Create):
// pages are read from the file as they are touched and belong to the page
// cache, so an array larger than the machine's memory can be streamed
// through. Writing to the bytes of a read-only mapping faults; those of a
// writable one reach the file as the system writes the page cache back,
// or at once with Flush. The mapping is released by Close, or once the Mapping is
// unreachable; keep it reachable (runtime.KeepAlive) for as long as its
// bytes are used. Truncating the file while it is mapped makes touching
// the lost pages fault, as it does for any mapped file: touch the bytes
// inside Access, which turns the fault into an error naming the file.
type Mapping struct {
	data     []byte // the array's bytes, within whole
	whole    []byte // the mapped file; nil when nothing was mapped
	path     string
	writable bool
	cleanup  runtime.Cleanup
}

// Map maps the file's data. Big-endian data cannot be used in place and is
// refused; where the system cannot map files (CanMap is false), Map is an
// error. An array of no elements maps nothing.
func (f *File) Map() (*Mapping, error) {
	if f.BigEndian {
		return nil, &Error{Path: f.path, Err: errors.New("big-endian data cannot be memory-mapped: glua computes on little-endian data; load it without mmap, which swaps the bytes")}
	}
	m := &Mapping{path: f.path, writable: f.writable}
	size := f.offset + f.NBytes()
	if f.NBytes() == 0 {
		return m, nil
	}
	if size > math.MaxInt {
		return nil, &Error{Path: f.path, Err: fmt.Errorf("%d bytes are too many to map on this system", size)}
	}
	whole, err := mmapFile(f.f, int(size), f.writable)
	if err != nil {
		return nil, &Error{Path: f.path, Err: fmt.Errorf("cannot map the file: %w", cause(err))}
	}
	m.whole, m.data = whole, whole[f.offset:size:size]
	track(whole, f.path)
	m.cleanup = runtime.AddCleanup(m, func(b []byte) { release(b) }, whole)
	return m, nil
}

// Bytes is the array's data in the mapping, read-only unless Writable:
// valid while m is reachable and not closed.
func (m *Mapping) Bytes() []byte { return m.data }

// Writable says whether the mapping's bytes may be written.
func (m *Mapping) Writable() bool { return m.writable }

// Flush writes what was written into a writable mapping to the file now
// and waits for it, as NumPy's memmap.flush does; a read-only mapping has
// nothing to write.
func (m *Mapping) Flush() error {
	if !m.writable || m.whole == nil {
		return nil
	}
	if err := msync(m.whole); err != nil {
		return &Error{Path: m.path, Err: fmt.Errorf("cannot write the mapped data back: %w", err)}
	}
	return nil
}

// Path is the mapped file's path.
func (m *Mapping) Path() string { return m.path }

// Close releases the mapping now; its bytes must not be used afterwards.
// A second Close does nothing.
func (m *Mapping) Close() error {
	m.cleanup.Stop()
	whole := m.whole
	m.whole, m.data = nil, nil
	if whole == nil {
		return nil
	}
	return release(whole)
}

// release forgets a mapping's address range and unmaps it, in that order:
// once unmapped, the range may be another mapping's.
func release(whole []byte) error {
	untrack(whole)
	return munmap(whole)
}
