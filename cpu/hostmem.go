package cpu

import (
	"fmt"
	"unsafe"
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
