package npy

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// reserve makes f size bytes long with its blocks allocated, so that a
// full disk is an error now rather than a SIGBUS at the first write
// through a mapping. A file system without fallocate (some network ones)
// gets a sparse file, as before.
func reserve(f *os.File, size int64) error {
	if size == 0 {
		return f.Truncate(0)
	}
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return f.Truncate(size)
	}
	if err != nil {
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
	return nil
}
