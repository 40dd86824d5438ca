package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Error is a failure to read or write an .npy file: the file, and why.
// It unwraps to the cause, so errors.Is(err, fs.ErrNotExist) holds for a
// missing file.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

var errEmptyPath = errors.New("the path is empty")

// fileError is err about path, named once: an *fs.PathError's own
// "open path: " would name it twice.
func fileError(path string, err error) error { return &Error{Path: path, Err: cause(err)} }

// cause strips the operation and file names an *fs.PathError or
// *os.LinkError adds: the Error names the file itself, and a temporary
// file's name means nothing to the caller.
func cause(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}

// File is an .npy file open for reading, its header read and checked
// against the file's size.
type File struct {
	Header
	path     string
	f        *os.File
	offset   int64 // where the data begins
	writable bool  // opened by OpenWritable: Map maps it read-write
}

// Open opens an .npy file and reads its header. The data must be exactly
// what the header's shape and dtype need: a shorter file is truncated, a
// longer one does not match its header. Close the File when done; on an
// error nothing is left open.
func Open(path string) (*File, error) { return open(path, os.O_RDONLY) }

// OpenWritable is Open for a file whose data Map then maps read-write
// (NumPy's mmap_mode="r+"): what is written into the mapping is written
// into the file.
func OpenWritable(path string) (*File, error) { return open(path, os.O_RDWR) }

func open(path string, flag int) (*File, error) {
	if path == "" {
		return nil, errEmptyPath
	}
	// Stat first: opening a FIFO would wait for a writer.
	st, err := os.Stat(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	if st.IsDir() {
		return nil, &Error{Path: path, Err: errors.New("is a directory, not an .npy file")}
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{Path: path, Err: fmt.Errorf("is not a regular file (%s)", st.Mode().Type())}
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, fileError(path, err)
	}
	h, offset, err := ReadHeader(f)
	if err == nil {
		err = checkSize(h, offset, st.Size())
	}
	if err != nil {
		f.Close()
		return nil, fileError(path, err)
	}
	return &File{Header: h, path: path, f: f, offset: offset, writable: flag == os.O_RDWR}, nil
}

// checkSize compares the file's size with what the header says follows it.
func checkSize(h Header, offset, size int64) error {
	need, have := h.NBytes(), size-offset
	switch {
	case have < need:
		return fmt.Errorf("truncated data: a %s %s array needs %d bytes after the header, and the file has %d", shapeString(h.Shape), h.DType, need, have)
	case have > need:
		return fmt.Errorf("file size does not match the header: a %s %s array needs %d bytes after the header, and the file has %d", shapeString(h.Shape), h.DType, need, have)
	}
	return nil
}

// Path is the file's path as Open was given it.
func (f *File) Path() string { return f.path }

// ReadData reads the array's data into dst, which must be NBytes long, in
// glua's little-endian order whatever the file's.
func (f *File) ReadData(dst []byte) error {
	if int64(len(dst)) != f.NBytes() {
		return &Error{Path: f.path, Err: fmt.Errorf("%d bytes given for data of %d", len(dst), f.NBytes())}
	}
	if _, err := f.f.ReadAt(dst, f.offset); err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("truncated data: the file became shorter while it was read")
		}
		return fileError(f.path, err)
	}
	if f.BigEndian {
		swapBytes(dst, f.DType.Size())
	}
	return nil
}

// Close closes the file. Data read or mapped from it stays valid.
func (f *File) Close() error { return f.f.Close() }

// swapBytes reverses the bytes of each size-byte element of b in place.
func swapBytes(b []byte, size int) {
	le, be := binary.LittleEndian, binary.BigEndian
	switch size {
	case 2:
		for i := 0; i+2 <= len(b); i += 2 {
			be.PutUint16(b[i:], le.Uint16(b[i:]))
		}
	case 4:
		for i := 0; i+4 <= len(b); i += 4 {
			be.PutUint32(b[i:], le.Uint32(b[i:]))
		}
	case 8:
		for i := 0; i+8 <= len(b); i += 8 {
			be.PutUint64(b[i:], le.Uint64(b[i:]))
		}
	}
}
