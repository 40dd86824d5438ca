//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package npy

import (
	"os"
	"syscall"
)

// CanMap says whether this system maps files (File.Map); where it does
// not, a caller reads the file instead.
const CanMap = true

// mmapFile maps the first size bytes of f read-only. MAP_SHARED: the pages
// are the page cache's, so mapping a file costs no memory of its own.
func mmapFile(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
}

func munmap(b []byte) error { return syscall.Munmap(b) }
