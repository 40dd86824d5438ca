package npy

import (
	"fmt"
	"os"

	"github.com/gluaproject/glua/internal/atomicfile"
)

// WriteFile writes an array to path as an .npy file. data is the array's
// bytes in C (row-major) order and the header's byte order. The file is
// written beside path under a temporary name, synced, and renamed into
// place, so that path holds its old content or the whole new file, never
// part of one, whatever fails (a full disk, a crash); on an error the
// temporary file is removed. A path that is a symbolic link is written
// through, as NumPy's np.save does; an existing file keeps its
// permissions.
func WriteFile(path string, h Header, data []byte) error {
	if path == "" {
		return errEmptyPath
	}
	head, err := h.Encode()
	if err != nil {
		return &Error{Path: path, Err: err}
	}
	if int64(len(data)) != h.NBytes() {
		return &Error{Path: path, Err: fmt.Errorf("%d bytes of data given for a %s %s array, which has %d", len(data), shapeString(h.Shape), h.DType, h.NBytes())}
	}
	return replace(path, func(f *os.File) error { return writeAll(f, head, data) })
}

// replace writes a new file for path with write (which closes it) and
// renames it into place (atomicfile.Replace), so that path holds its old
// content or the whole new file.
func replace(path string, write func(*os.File) error) error {
	if err := atomicfile.Replace(path, write); err != nil {
		return &Error{Path: path, Err: err}
	}
	return nil
}

// writeAll writes the header and data, syncs and closes the file: the
// rename that follows must not publish data still only in the page cache.
func writeAll(f *os.File, head, data []byte) error {
	_, err := f.Write(head)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Create makes an .npy file for h's array with its data all zero, to be
// opened with OpenWritable and filled through a mapping (NumPy's
// open_memmap with mode="w+"). On Linux the data's blocks are allocated
// now (fallocate), so a disk too full for the array is an error here, not
// a SIGBUS at the first write through a mapping; elsewhere, and on file
// systems without fallocate, the data is a hole filled as it is written.
// It replaces path as WriteFile does (replace), so path is never a file
// with a header and no data.
func Create(path string, h Header) error {
	if path == "" {
		return errEmptyPath
	}
	head, err := h.Encode()
	if err != nil {
		return &Error{Path: path, Err: err}
	}
	return replace(path, func(f *os.File) error {
		_, err := f.Write(head)
		if err == nil {
			err = reserve(f, int64(len(head))+h.NBytes())
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
}
