package cpu

import (
	"fmt"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// The transfers below find their memory under b.mu and copy without it, as
// Gemm and the runtime's kernels (through Bytes) do: several runtimes may
// share one Backend, and a large copy of one must not hold up every call of
// the others. This is safe because memory is freed to the backend only by
// its owner, the pool, and only once no block in it is live: a copy runs on
// live blocks, so its bytes stay mapped until it is done (and an address is
// never reused for another allocation: addresses only grow). Ordering
// between a copy and later use of the same memory is the caller's, as on a
// device: the pool hands a block to another caller only after the first
// freed it, and both steps take the pool's lock.

// Upload copies src into device memory at dst; the host waits for it.
func (b *Backend) Upload(dst device.Ptr, src []byte, s device.Stream) error {
	return b.upload(dst, src, s, false)
}

// upload is Upload, or with async an asynchronous one, which the host
// does not wait for.
func (b *Backend) upload(dst device.Ptr, src []byte, s device.Stream, async bool) error {
	if err := b.refuseInCapture("a copy from the host", s); err != nil {
		return err
	}
	d, err := b.transfer("upload", s, !async, region{"destination", dst, uint64(len(src))})
	if err != nil {
		return err
	}
	copy(d[0], src)
	return nil
}

// Download copies len(dst) bytes from device memory at src into dst; the
// host waits for it.
func (b *Backend) Download(dst []byte, src device.Ptr, s device.Stream) error {
	return b.download(dst, src, s, false)
}

// download is Download, or with async an asynchronous one.
func (b *Backend) download(dst []byte, src device.Ptr, s device.Stream, async bool) error {
	if err := b.refuseInCapture("a copy to the host", s); err != nil {
		return err
	}
	v, err := b.transfer("download", s, !async, region{"source", src, uint64(len(dst))})
	if err != nil {
		return err
	}
	copy(dst, v[0])
	return nil
}

// Copy copies nbytes from src to dst. Overlapping ranges copy as memmove
// does, which is what a user moving rows within one array expects.
func (b *Backend) Copy(dst, src device.Ptr, nbytes uint64, s device.Stream) error {
	if rec, err := b.recorded(s, "copy", []use{{"source", src, nbytes, false}, {"destination", dst, nbytes, true}}, func() error {
		return b.checkRegions("copy", s, region{"source", src, nbytes}, region{"destination", dst, nbytes})
	},
		func() error { return b.Copy(dst, src, nbytes, 0) }); rec {
		return err
	}
	v, err := b.transfer("copy", s, false, region{"source", src, nbytes}, region{"destination", dst, nbytes})
	if err != nil {
		return err
	}
	copy(v[1], v[0])
	return nil
}

// Memset sets nbytes at dst to value.
func (b *Backend) Memset(dst device.Ptr, value byte, nbytes uint64, s device.Stream) error {
	if rec, err := b.recorded(s, "memset", []use{{"destination", dst, nbytes, true}}, func() error { return b.checkRegions("memset", s, region{"destination", dst, nbytes}) },
		func() error { return b.Memset(dst, value, nbytes, 0) }); rec {
		return err
	}
	v, err := b.transfer("memset", s, false, region{"destination", dst, nbytes})
	if err != nil {
		return err
	}
	d := v[0]
	if value == 0 {
		clear(d)
		return nil
	}
	// Doubling copies run at memmove speed; a byte loop is several times
	// slower on large arrays.
	if len(d) > 0 {
		d[0] = value
		for n := 1; n < len(d); n *= 2 {
			copy(d[n:], d[:n])
		}
	}
	return nil
}

// region names one operand of a transfer for regions.
type region struct {
	what   string
	p      device.Ptr
	nbytes uint64
}

// transfer checks stream s and finds the bytes of each operand (at most
// two) for the call named op, under b.mu, and notes their use on s (a
// "destination" is written, the rest read), refusing a use no order
// makes safe (order.go); the caller copies after it returns. With
// blocking set the host waits for the transfer. An array, not a slice, so
// that a transfer allocates nothing.
func (b *Backend) transfer(op string, s device.Stream, blocking bool, rs ...region) (out [2][]byte, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if out, err = b.regionsLocked(op, s, rs...); err != nil {
		return out, err
	}
	var uses [2]use
	for i, r := range rs {
		uses[i] = use{r.what, r.p, r.nbytes, r.what == "destination"}
	}
	if err := b.follow(op, s, uses[:len(rs)]...); err != nil {
		return out, err
	}
	if blocking {
		b.hostWaitedStream(s)
	}
	return out, nil
}

// checkRegions is regions' check alone, for an operation recorded into a
// graph: b.mu must be held.
func (b *Backend) checkRegions(op string, s device.Stream, rs ...region) error {
	_, err := b.regionsLocked(op, s, rs...)
	return err
}

func (b *Backend) regionsLocked(op string, s device.Stream, rs ...region) (out [2][]byte, err error) {
	if err := b.checkStream(op, s); err != nil {
		return out, err
	}
	for i, r := range rs {
		if out[i], err = b.region(op, r.what, r.p, r.nbytes); err != nil {
			return out, err
		}
	}
	return out, nil
}

// UploadAsync is Upload: the CPU backend finishes a copy before the call
// returns, which satisfies every ordering an asynchronous copy promises.
// It refuses the host memory the cuda backend refuses: memory not inside
// one AllocHost buffer or one RegisterHost range.
func (b *Backend) UploadAsync(dst device.Ptr, src []byte, s device.Stream) error {
	if len(src) > 0 && !b.isPinned(src) {
		return fmt.Errorf("cpu: UploadAsync: the source is not pinned memory (one buffer from AllocHost, or one range from RegisterHost); use Upload")
	}
	return b.upload(dst, src, s, true)
}

// DownloadAsync is Download, for the same reason, and refuses what
// UploadAsync refuses.
func (b *Backend) DownloadAsync(dst []byte, src device.Ptr, s device.Stream) error {
	if len(dst) > 0 && !b.isPinned(dst) {
		return fmt.Errorf("cpu: DownloadAsync: the destination is not pinned memory (one buffer from AllocHost, or one range from RegisterHost); use Download")
	}
	return b.download(dst, src, s, true)
}

// UploadBlockAsync is the cuda backend's block upload, done at once:
// height rows of width bytes, pitch bytes apart in src, into contiguous
// memory at dst. It refuses what the cuda backend refuses.
func (b *Backend) UploadBlockAsync(dst device.Ptr, src []byte, pitch, width, height int, s device.Stream) error {
	if err := b.checkBlock("UploadBlockAsync", "source", src, pitch, width, height); err != nil || width <= 0 || height <= 0 {
		return err
	}
	if pitch == width { // rows that touch: one copy, as the driver makes it
		return b.upload(dst, src, s, true)
	}
	for r := range height {
		if err := b.upload(dst+device.Ptr(r*width), src[r*pitch:r*pitch+width], s, true); err != nil {
			return err
		}
	}
	return nil
}

// DownloadBlockAsync is the cuda backend's block download, done at once:
// height·width contiguous bytes at src into height rows of width bytes,
// pitch bytes apart in dst. It refuses what the cuda backend refuses.
func (b *Backend) DownloadBlockAsync(dst []byte, pitch, width, height int, src device.Ptr, s device.Stream) error {
	if err := b.checkBlock("DownloadBlockAsync", "destination", dst, pitch, width, height); err != nil || width <= 0 || height <= 0 {
		return err
	}
	if pitch == width {
		return b.download(dst, src, s, true)
	}
	for r := range height {
		if err := b.download(dst[r*pitch:r*pitch+width], src+device.Ptr(r*width), s, true); err != nil {
			return err
		}
	}
	return nil
}

// checkBlock is the cuda backend's checks of a block copy's host side.
func (b *Backend) checkBlock(call, what string, host []byte, pitch, width, height int) error {
	if width <= 0 || height <= 0 {
		return nil
	}
	if pitch < width || len(host) != (height-1)*pitch+width {
		return fmt.Errorf("cpu: %s: %d rows of %d bytes, %d apart, are not %d bytes", call, height, width, pitch, len(host))
	}
	if !b.isPinned(host) {
		return fmt.Errorf("cpu: %s: the %s is not pinned memory (one buffer from AllocHost, or one range from RegisterHost)", call, what)
	}
	return nil
}

// isPinned reports whether buf lies inside one AllocHost buffer or one
// RegisterHost range, as the cuda backend's check does; the driver
// refuses a copy across two, even where they touch.
func (b *Backend) isPinned(buf []byte) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	hi := lo + uintptr(len(buf))
	b.mu.Lock()
	defer b.mu.Unlock()
	for p, size := range b.host {
		if base := uintptr(unsafe.Pointer(p)); lo >= base && hi <= base+uintptr(size) {
			return true
		}
	}
	for base, size := range b.registered {
		if lo >= base && hi <= base+uintptr(size) {
			return true
		}
	}
	return false
}
