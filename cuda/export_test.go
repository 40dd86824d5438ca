package cuda

import (
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// RegisterHostMemory sets whether AllocHost page-locks mapped memory in
// place, until restore is called.
func RegisterHostMemory(on bool) (restore func()) {
	was := registerHostMemory
	registerHostMemory = on
	return func() { registerHostMemory = was }
}

// MappedHost reports whether buf, from AllocHost, is mapped memory
// page-locked in place.
func (b *Backend) MappedHost(buf []byte) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, ok := b.pinned.Get(hostBuffer{base: uintptr(unsafe.Pointer(unsafe.SliceData(buf)))})
	return ok && h.mapped != nil
}

// StreamPriority is s's priority; lower numbers are greater.
func (b *Backend) StreamPriority(s device.Stream) (int, error) { return b.streamPriority(s) }
