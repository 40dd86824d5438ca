package cpu

import (
	"fmt"
	"os"
	"unsafe"

	"github.com/gluaproject/glua/config"
)

// AllocHost is the CPU backend's "page-locked" host memory: ordinary
// memory, since every host array is already as fast as it gets here. It
// exists so that pinned host arrays and staging buffers take the same
// path, and the same limit and cache, on the CPU as on a GPU.
func (b *Backend) AllocHost(nbytes uint64) ([]byte, error) {
	if nbytes == 0 {
		return nil, fmt.Errorf("cpu: AllocHost of 0 bytes")
	}
	buf := alignedBytes(nbytes)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("alloc host: %w", errClosed)
	}
	if b.host == nil {
		b.host = map[*byte]int{}
	}
	b.host[unsafe.SliceData(buf)] = len(buf)
	return buf, nil
}

// FreeHost forgets memory AllocHost returned; the collector takes it back.
func (b *Backend) FreeHost(buf []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	base := unsafe.SliceData(buf)
	if _, ok := b.host[base]; !ok || cap(buf) == 0 {
		return fmt.Errorf("cpu: FreeHost: the buffer was not returned by AllocHost (or was freed already)")
	}
	delete(b.host, base)
	return nil
}

// RegisterHost stands in for the cuda backend's page-locking in place:
// nothing to lock here, but the same memory is refused (not whole pages,
// or overlapping memory registered or from AllocHost), so that code
// tested on the CPU registers only what the GPU accepts.
func (b *Backend) RegisterHost(buf []byte) error {
	base, n := uintptr(unsafe.Pointer(unsafe.SliceData(buf))), uintptr(len(buf))
	page := uintptr(os.Getpagesize())
	if n == 0 || base%page != 0 || n%page != 0 {
		return fmt.Errorf("cpu: RegisterHost: %s at %#x is not whole pages", config.FormatSize(uint64(n)), base)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("register host: %w", errClosed)
	}
	overlaps := func(p uintptr, size int) bool { return p < base+n && base < p+uintptr(size) }
	for p, size := range b.host {
		if overlaps(uintptr(unsafe.Pointer(p)), size) {
			return fmt.Errorf("cpu: RegisterHost: %s at %#x overlaps memory that is page-locked already", config.FormatSize(uint64(n)), base)
		}
	}
	for p, size := range b.registered {
		if overlaps(p, size) {
			return fmt.Errorf("cpu: RegisterHost: %s at %#x overlaps memory that is page-locked already", config.FormatSize(uint64(n)), base)
		}
	}
	if b.registered == nil {
		b.registered = map[uintptr]int{}
	}
	b.registered[base] = int(n)
	return nil
}

// UnregisterHost forgets RegisterHost's registration of buf.
func (b *Backend) UnregisterHost(buf []byte) error {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	b.mu.Lock()
	defer b.mu.Unlock()
	if size, ok := b.registered[base]; !ok || size != len(buf) {
		return fmt.Errorf("cpu: UnregisterHost: %s at %#x was not registered with RegisterHost", config.FormatSize(uint64(len(buf))), base)
	}
	delete(b.registered, base)
	return nil
}
