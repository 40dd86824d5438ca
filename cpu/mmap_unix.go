//go:build unix

package cpu

import "syscall"

// mapBytes returns n zeroed bytes outside the Go heap, so that Free gives
// them back to the operating system at once: on the Go heap a freed buffer
// stays until a collection, and a process cycling gigabytes through the
// pool held several times its capacity.
func mapBytes(n uint64) ([]byte, error) {
	return syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

func unmapBytes(b []byte) error { return syscall.Munmap(b) }
