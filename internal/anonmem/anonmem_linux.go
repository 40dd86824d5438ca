package anonmem

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Map maps n zeroed bytes (n > 0), aligned to Huge and advised for huge
// pages. It maps Huge bytes more than n to find the aligned start; the
// slack is address space only, never written, so never backed by memory.
func Map(n int) (*Mapping, error) {
	if n <= 0 {
		return nil, fmt.Errorf("anonmem: cannot map %d bytes", n)
	}
	whole, err := unix.Mmap(-1, 0, n+Huge, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("anonmem: mapping %d bytes: %w", n, err)
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(whole)))
	off := int((Huge - addr%Huge) % Huge)
	data := whole[off : off+n : off+n]
	_ = unix.Madvise(data, unix.MADV_HUGEPAGE) // advice: refused is as if never given
	return &Mapping{whole: whole, data: data}, nil
}

// Unmap returns the memory to the system. It is called once.
func (m *Mapping) Unmap() error {
	if err := unix.Munmap(m.whole); err != nil {
		return fmt.Errorf("anonmem: unmapping: %w", err)
	}
	return nil
}
