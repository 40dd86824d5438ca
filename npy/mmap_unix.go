//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package npy

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// CanMap says whether this system maps files (File.Map); where it does
// not, a caller reads the file instead.
const CanMap = true

// mmapFile maps the first size bytes of f, read-only or read-write.
// MAP_SHARED: the pages are the page cache's, so mapping a file costs no
// memory of its own, and what is written reaches the file.
func mmapFile(f *os.File, size int, writable bool) ([]byte, error) {
	prot := syscall.PROT_READ
	if writable {
		prot |= syscall.PROT_WRITE
	}
	return syscall.Mmap(int(f.Fd()), 0, size, prot, syscall.MAP_SHARED)
}

func munmap(b []byte) error { return syscall.Munmap(b) }

func msync(b []byte) error { return unix.Msync(b, unix.MS_SYNC) }
