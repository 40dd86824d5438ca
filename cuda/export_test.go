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

// PlannedShapes is how many product shapes run through a cuBLASLt plan.
func (b *Backend) PlannedShapes() int {
	b.lt.mu.Lock()
	defer b.lt.mu.Unlock()
	n := 0
	for _, p := range b.lt.plans {
		if p.ok {
			n++
		}
	}
	return n
}

// PlanSmallProducts sets whether small products may go through cuBLASLt
// (when it loaded), until restore is called.
func (b *Backend) PlanSmallProducts(on bool) (restore func()) {
	b.lt.mu.Lock()
	was := b.lt.loaded
	b.lt.loaded = on && was
	b.lt.mu.Unlock()
	return func() {
		b.lt.mu.Lock()
		b.lt.loaded = was
		b.lt.mu.Unlock()
	}
}
