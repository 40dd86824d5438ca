package cuda

import (
	"fmt"
	"os"
	"unsafe"

	"github.com/gluaproject/glua/device"
	"github.com/google/btree"
)

// Alloc returns nbytes of uninitialised device memory. cuMemAlloc aligns
// every allocation to at least 256 bytes. A zero-byte request gets a
// one-byte allocation, so that every successful Alloc has a distinct
// address that Free accepts.
func (b *Backend) Alloc(nbytes uint64) (device.Ptr, error) {
	if err := b.begin(); err != nil {
		return 0, err
	}
	defer b.end()
	return b.alloc(nbytes)
}

// alloc runs inside begin/end.
func (b *Backend) alloc(nbytes uint64) (device.Ptr, error) {
	n := max(nbytes, 1)
	var p uint64
	r := cuResult(b.drv.cuMemAlloc.call(uintptr(unsafe.Pointer(&p)), uintptr(n)))
	if err := b.check("cuMemAlloc", formatBytes(nbytes), r); err != nil {
		return 0, err
	}
	return device.Ptr(p), nil
}

// Free returns memory obtained from Alloc.
func (b *Backend) Free(p device.Ptr, nbytes uint64) error {
	if p == 0 {
		return nil
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	return b.check("cuMemFree", "", cuResult(b.drv.cuMemFree.call(uintptr(p))))
}

// Upload copies src from pageable host memory to dst, behind the work
// queued on s, and returns once dst holds the bytes, so that work on any
// stream may read them. On stream 0 it uses the synchronous copy, which
// returns once src is staged but may leave the transfer itself in flight,
// unordered with the runtime's other streams (they do not block on stream
// 0): a kernel on one of them read the old bytes. So both forms wait for
// the stream; an asynchronous copy from pageable memory also gives no
// promise about when src has been read.
func (b *Backend) Upload(dst device.Ptr, src []byte, s device.Stream) error {
	if err := b.refuseInCapture("cuMemcpyHtoD", s, false); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	if s == 0 {
		r := cuResult(b.drv.cuMemcpyHtoD.call(uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src))))
		if err := b.check("cuMemcpyHtoD", formatBytes(uint64(len(src))), r); err != nil {
			return err
		}
	} else {
		r := cuResult(b.drv.cuMemcpyHtoDAsync.call(uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)), uintptr(s)))
		if err := b.check("cuMemcpyHtoDAsync", formatBytes(uint64(len(src))), r); err != nil {
			return err
		}
	}
	return b.check("cuStreamSynchronize", "", cuResult(b.drv.cuStreamSynchronize.call(uintptr(s))))
}

// Download copies len(dst) bytes from src and returns when dst holds them.
func (b *Backend) Download(dst []byte, src device.Ptr, s device.Stream) error {
	if err := b.refuseInCapture("cuMemcpyDtoH", s, false); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	if s == 0 {
		r := cuResult(b.drv.cuMemcpyDtoH.call(uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst))))
		return b.check("cuMemcpyDtoH", formatBytes(uint64(len(dst))), r)
	}
	r := cuResult(b.drv.cuMemcpyDtoHAsync.call(uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst)), uintptr(s)))
	if err := b.check("cuMemcpyDtoHAsync", formatBytes(uint64(len(dst))), r); err != nil {
		return err
	}
	return b.check("cuStreamSynchronize", "", cuResult(b.drv.cuStreamSynchronize.call(uintptr(s))))
}

// Copy copies nbytes from src to dst on the device, ordered on s.
func (b *Backend) Copy(dst, src device.Ptr, nbytes uint64, s device.Stream) error {
	if nbytes == 0 {
		return nil
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	r := cuResult(b.drv.cuMemcpyDtoDAsync.call(uintptr(dst), uintptr(src), uintptr(nbytes), uintptr(s)))
	return b.check("cuMemcpyDtoDAsync", formatBytes(nbytes), r)
}

// Memset sets nbytes at dst to value, ordered on s.
func (b *Backend) Memset(dst device.Ptr, value byte, nbytes uint64, s device.Stream) error {
	if nbytes == 0 {
		return nil
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	r := cuResult(b.drv.cuMemsetD8Async.call(uintptr(dst), uintptr(value), uintptr(nbytes), uintptr(s)))
	return b.check("cuMemsetD8Async", formatBytes(nbytes), r)
}

// AllocHost returns nbytes of page-locked host memory, which the device
// reads and writes by DMA: copies from it run at full bus speed and
// UploadAsync/DownloadAsync can overlap them with computation. It starts
// zeroed. The slice must be returned with FreeHost, not left to the
// garbage collector.
//
// The memory is mapped, its pages asked for on several threads, and then
// page-locked in place (cuMemHostRegister): on the H100's host a pinned
// gigabyte took 0.06-0.07 s this way and 0.6 s from cuMemHostAlloc.
// Where the driver or the system will not, it comes from cuMemHostAlloc.
func (b *Backend) AllocHost(nbytes uint64) ([]byte, error) {
	if nbytes == 0 {
		return nil, fmt.Errorf("cuda: AllocHost: zero bytes requested")
	}
	if err := b.begin(); err != nil {
		return nil, err
	}
	defer b.end()
	if buf, ok := b.registerHost(nbytes); ok {
		return buf, nil
	}
	var p unsafe.Pointer
	r := cuResult(b.drv.cuMemHostAlloc.call(uintptr(unsafe.Pointer(&p)), uintptr(nbytes), cuMemHostAllocPortable))
	if err := b.check("cuMemHostAlloc", formatBytes(nbytes), r); err != nil {
		return nil, err
	}
	buf := unsafe.Slice((*byte)(p), nbytes)
	clear(buf) // the driver's pages may hold anything; mapped ones start zeroed
	b.mu.Lock()
	b.pinned.ReplaceOrInsert(hostBuffer{base: uintptr(p), size: nbytes})
	b.mu.Unlock()
	return buf, nil
}

// registerHost is AllocHost's way through mapped memory page-locked in
// place; ok is false when it could not, having given back what it took.
// The caller holds begin.
func (b *Backend) registerHost(nbytes uint64) (buf []byte, ok bool) {
	if !registerHostMemory || b.drv.cuMemHostRegister == 0 || b.drv.cuMemHostUnregister == 0 {
		return nil, false
	}
	buf, err := mapHost(nbytes)
	if err != nil {
		return nil, false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	if r := cuResult(b.drv.cuMemHostRegister.call(p, uintptr(nbytes), cuMemHostRegisterPortable)); r != cudaSuccess {
		unmapHost(buf)
		return nil, false
	}
	b.mu.Lock()
	b.pinned.ReplaceOrInsert(hostBuffer{base: p, size: nbytes, mapped: buf})
	b.mu.Unlock()
	return buf, true
}

// registerHostMemory lets AllocHost page-lock mapped memory in place; the
// tests turn it off to cover cuMemHostAlloc.
var registerHostMemory = true

// FreeHost returns a buffer obtained from AllocHost (the whole slice, as
// AllocHost returned it).
func (b *Backend) FreeHost(buf []byte) error {
	if cap(buf) == 0 {
		return fmt.Errorf("cuda: FreeHost: empty buffer")
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	b.mu.Lock()
	h, ok := b.pinned.Get(hostBuffer{base: base})
	if ok && !h.registered {
		b.pinned.Delete(h)
	}
	b.mu.Unlock()
	if !ok || h.registered {
		return fmt.Errorf("cuda: FreeHost: the buffer at %#x was not returned by AllocHost (or was freed already)", base)
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	if h.mapped == nil {
		return b.check("cuMemFreeHost", "", cuResult(b.drv.cuMemFreeHost.call(base)))
	}
	err := b.check("cuMemHostUnregister", formatBytes(h.size), cuResult(b.drv.cuMemHostUnregister.call(base)))
	if err != nil {
		return err // still page-locked: unmapping it would leave the driver a stale range
	}
	if err := unmapHost(h.mapped); err != nil {
		return fmt.Errorf("cuda: FreeHost: unmapping %s: %w", formatBytes(h.size), err)
	}
	return nil
}

// hostBuffer is one AllocHost buffer. mapped is the memory mapHost gave,
// page-locked in place, or nil for cuMemHostAlloc's; registered marks
// memory the caller owns, page-locked by RegisterHost.
type hostBuffer struct {
	base       uintptr
	size       uint64
	mapped     []byte
	registered bool
}

// RegisterHost page-locks memory the caller owns, in place, until
// UnregisterHost: copies to and from it then run by DMA, asynchronously,
// as from AllocHost's. buf must start and end on a page boundary (the
// driver locks whole pages, and a page shared with another registration
// would be locked twice) and must stay mapped until it is unregistered.
func (b *Backend) RegisterHost(buf []byte) error {
	base, n := uintptr(unsafe.Pointer(unsafe.SliceData(buf))), uint64(len(buf))
	page := uintptr(os.Getpagesize())
	if n == 0 || base%page != 0 || uintptr(n)%page != 0 {
		return fmt.Errorf("cuda: RegisterHost: %s at %#x is not whole pages", formatBytes(n), base)
	}
	if b.drv.cuMemHostRegister == 0 || b.drv.cuMemHostUnregister == 0 {
		return fmt.Errorf("cuda: RegisterHost: the driver has no cuMemHostRegister")
	}
	b.mu.Lock()
	overlap := b.pinnedOverlapLocked(base, n)
	b.mu.Unlock()
	if overlap {
		return fmt.Errorf("cuda: RegisterHost: %s at %#x overlaps memory that is page-locked already", formatBytes(n), base)
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	if err := b.check("cuMemHostRegister", formatBytes(n), cuResult(b.drv.cuMemHostRegister.call(base, uintptr(n), cuMemHostRegisterPortable))); err != nil {
		return err
	}
	b.mu.Lock()
	b.pinned.ReplaceOrInsert(hostBuffer{base: base, size: n, registered: true})
	b.mu.Unlock()
	return nil
}

// UnregisterHost ends RegisterHost's page-locking of buf (the whole slice,
// as registered). Copies queued to or from it must be over.
func (b *Backend) UnregisterHost(buf []byte) error {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	b.mu.Lock()
	h, ok := b.pinned.Get(hostBuffer{base: base})
	ok = ok && h.registered && h.size == uint64(len(buf))
	if ok {
		b.pinned.Delete(h)
	}
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("cuda: UnregisterHost: %s at %#x was not registered with RegisterHost", formatBytes(uint64(len(buf))), base)
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	return b.check("cuMemHostUnregister", formatBytes(h.size), cuResult(b.drv.cuMemHostUnregister.call(base)))
}

// pinnedOverlapLocked reports whether n bytes at base share an address
// with a page-locked buffer. The caller holds mu.
func (b *Backend) pinnedOverlapLocked(base uintptr, n uint64) bool {
	overlap := false
	b.pinned.DescendLessOrEqual(hostBuffer{base: base + uintptr(n) - 1}, func(h hostBuffer) bool {
		overlap = h.base+uintptr(h.size) > base
		return false
	})
	return overlap
}

// hostBuffers is AllocHost's buffers in the order of their addresses.
type hostBuffers = *btree.BTreeG[hostBuffer]

func newHostBuffers() hostBuffers {
	return btree.NewG(8, func(x, y hostBuffer) bool { return x.base < y.base })
}

// isPinned reports whether buf lies inside one AllocHost buffer or one
// RegisterHost range: the one that begins nearest below it. A range
// across two registrations that touch is not: the driver refuses a copy
// across them (CUDA_ERROR_INVALID_VALUE on an H200). Every asynchronous copy asks, from each
// of a Stager's threads, so the answer must not cost a pass over every
// pinned buffer of the program.
func (b *Backend) isPinned(buf []byte) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	hi := lo + uintptr(len(buf))
	b.mu.Lock()
	defer b.mu.Unlock()
	in := false
	b.pinned.DescendLessOrEqual(hostBuffer{base: lo}, func(h hostBuffer) bool {
		in = hi <= h.base+uintptr(h.size)
		return false
	})
	return in
}

// UploadAsync queues a copy from pinned memory (a slice of an AllocHost
// buffer) to dst on s and returns at once: src must not change until the
// stream has reached this point (record an event or synchronize). Pageable
// memory is refused, because the driver would silently make the copy
// synchronous or read it late.
func (b *Backend) UploadAsync(dst device.Ptr, src []byte, s device.Stream) error {
	if err := b.refuseInCapture("cuMemcpyHtoDAsync", s, false); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	if !b.isPinned(src) {
		return fmt.Errorf("cuda: UploadAsync: the source is not pinned memory (one buffer from AllocHost, or one range from RegisterHost); use Upload")
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	r := cuResult(b.drv.cuMemcpyHtoDAsync.call(uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)), uintptr(s)))
	return b.check("cuMemcpyHtoDAsync", formatBytes(uint64(len(src))), r)
}

// DownloadAsync queues a copy from src into pinned memory (a slice of an
// AllocHost buffer) on s and returns at once: dst holds the data once the
// stream has reached this point.
func (b *Backend) DownloadAsync(dst []byte, src device.Ptr, s device.Stream) error {
	if err := b.refuseInCapture("cuMemcpyDtoHAsync", s, false); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	if !b.isPinned(dst) {
		return fmt.Errorf("cuda: DownloadAsync: the destination is not pinned memory (one buffer from AllocHost, or one range from RegisterHost); use Download")
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	r := cuResult(b.drv.cuMemcpyDtoHAsync.call(uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst)), uintptr(s)))
	return b.check("cuMemcpyDtoHAsync", formatBytes(uint64(len(dst))), r)
}

// formatBytes prints a size in IEC units for error messages (the cuda
// package keeps to the standard library).
func formatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
