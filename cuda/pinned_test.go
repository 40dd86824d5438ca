package cuda

import (
	"testing"
	"unsafe"
)

// isPinned accepts a range only inside one AllocHost buffer: its start,
// its end, a piece in its middle; not a range that runs past its end, one
// in the gap between buffers, one that spans two buffers that touch, nor
// one in a buffer that was freed. No driver is needed for the bookkeeping.
func TestIsPinnedFindsTheBufferARangeLiesIn(t *testing.T) {
	mem := make([]byte, 1<<16)
	at := func(off, n int) []byte { return unsafe.Slice(&mem[off], n) }
	b := &Backend{pinned: newHostBuffers()}
	for _, off := range []int{0x1000, 0x3000, 0x4000, 0x9000} {
		b.pinned.ReplaceOrInsert(hostBuffer{base: uintptr(unsafe.Pointer(&mem[off])), size: 0x1000})
	}
	for _, c := range []struct {
		off, n int
		want   bool
	}{
		{0x1000, 0x1000, true},
		{0x1000, 1, true},
		{0x1fff, 1, true},
		{0x1800, 0x100, true},
		{0x9000, 0x1000, true},
		{0x1800, 0x1000, false}, // past the end
		{0x0fff, 2, false},      // starts before the first
		{0x2000, 0x10, false},   // in the gap
		{0x3800, 0x1000, false}, // across two that touch
		{0xa000, 1, false},      // after the last
	} {
		if got := b.isPinned(at(c.off, c.n)); got != c.want {
			t.Errorf("[%#x, %#x): isPinned = %t, want %t", c.off, c.off+c.n, got, c.want)
		}
	}
	b.pinned.Delete(hostBuffer{base: uintptr(unsafe.Pointer(&mem[0x3000]))})
	if b.isPinned(at(0x3000, 0x10)) {
		t.Error("a freed buffer is still pinned")
	}
	if !b.isPinned(at(0x4000, 0x10)) {
		t.Error("freeing one buffer lost its neighbour")
	}
}

// memcpy2D has CUDA_MEMCPY2D's layout on a 64-bit host: 128 bytes, the
// destination's fields from byte 56, the width at 112.
func TestMemcpy2DIsTheDriversLayout(t *testing.T) {
	var c memcpy2D
	if s := unsafe.Sizeof(c); s != 128 {
		t.Errorf("memcpy2D is %d bytes, want 128", s)
	}
	for _, f := range []struct {
		name      string
		got, want uintptr
	}{
		{"srcMemoryType", unsafe.Offsetof(c.srcMemoryType), 16},
		{"srcHost", unsafe.Offsetof(c.srcHost), 24},
		{"srcPitch", unsafe.Offsetof(c.srcPitch), 48},
		{"dstXInBytes", unsafe.Offsetof(c.dstXInBytes), 56},
		{"dstMemoryType", unsafe.Offsetof(c.dstMemoryType), 72},
		{"dstDevice", unsafe.Offsetof(c.dstDevice), 88},
		{"dstPitch", unsafe.Offsetof(c.dstPitch), 104},
		{"widthInBytes", unsafe.Offsetof(c.widthInBytes), 112},
		{"height", unsafe.Offsetof(c.height), 120},
	} {
		if f.got != f.want {
			t.Errorf("%s at byte %d, want %d", f.name, f.got, f.want)
		}
	}
}
