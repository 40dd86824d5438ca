package cuda

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// memcpy2D is the driver's CUDA_MEMCPY2D, laid out as cuda.h lays it out
// on a 64-bit host (the memory types are 4-byte enums, padded to 8).
type memcpy2D struct {
	srcXInBytes, srcY uintptr
	srcMemoryType     uint32
	_                 uint32
	srcHost           uintptr
	srcDevice         uint64
	srcArray          uintptr
	srcPitch          uintptr
	dstXInBytes, dstY uintptr
	dstMemoryType     uint32
	_                 uint32
	dstHost           uintptr
	dstDevice         uint64
	dstArray          uintptr
	dstPitch          uintptr
	widthInBytes      uintptr
	height            uintptr
}

const (
	cuMemoryTypeHost   = 1 // CU_MEMORYTYPE_HOST
	cuMemoryTypeDevice = 2 // CU_MEMORYTYPE_DEVICE
)

// UploadBlockAsync queues a copy of a block of host memory, height rows
// of width bytes whose starts are pitch bytes apart, into height·width
// contiguous bytes at dst, on s, and returns at once. src runs from the
// block's first byte to its last ((height-1)·pitch + width bytes) and
// must lie in pinned memory, as UploadAsync's source: a column panel of a
// matrix page-locked where it lies goes up without a gather on the host.
func (b *Backend) UploadBlockAsync(dst device.Ptr, src []byte, pitch, width, height int, s device.Stream) error {
	contiguous := func() error { return b.UploadAsync(dst, src, s) }
	return b.copyBlock("UploadBlockAsync", "source", src, pitch, width, height, s, contiguous, func(c *memcpy2D, host uintptr) {
		*c = memcpy2D{
			srcMemoryType: cuMemoryTypeHost, srcHost: host, srcPitch: uintptr(pitch),
			dstMemoryType: cuMemoryTypeDevice, dstDevice: uint64(dst), dstPitch: uintptr(width),
		}
	})
}

// DownloadBlockAsync is UploadBlockAsync's reverse: height·width
// contiguous bytes at src into a block of pinned host memory, height
// rows of width bytes pitch bytes apart: a piece of a matrix's columns
// comes down into the matrix where it lies, page-locked in place.
func (b *Backend) DownloadBlockAsync(dst []byte, pitch, width, height int, src device.Ptr, s device.Stream) error {
	contiguous := func() error { return b.DownloadAsync(dst, src, s) }
	return b.copyBlock("DownloadBlockAsync", "destination", dst, pitch, width, height, s, contiguous, func(c *memcpy2D, host uintptr) {
		*c = memcpy2D{
			srcMemoryType: cuMemoryTypeDevice, srcDevice: uint64(src), srcPitch: uintptr(width),
			dstMemoryType: cuMemoryTypeHost, dstHost: host, dstPitch: uintptr(pitch),
		}
	})
}

// copyBlock checks a block copy's host side (what names it in messages)
// and queues the copy fill describes, with the block's size, or, when the
// rows touch, the contiguous copy.
func (b *Backend) copyBlock(call, what string, host []byte, pitch, width, height int, s device.Stream, contiguous func() error, fill func(*memcpy2D, uintptr)) error {
	if err := b.refuseInCapture("cuMemcpy2DAsync", s, false); err != nil {
		return err
	}
	if width <= 0 || height <= 0 {
		return nil
	}
	if pitch < width || len(host) != (height-1)*pitch+width {
		return fmt.Errorf("cuda: %s: %d rows of %d bytes, %d apart, are not %d bytes", call, height, width, pitch, len(host))
	}
	if !b.isPinned(host) {
		return fmt.Errorf("cuda: %s: the %s is not pinned memory (one buffer from AllocHost, or one range from RegisterHost)", call, what)
	}
	if pitch == width {
		return contiguous()
	}
	if b.drv.cuMemcpy2DAsync == 0 {
		return fmt.Errorf("cuda: %s: the driver has no cuMemcpy2DAsync", call)
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	c := &memcpy2D{}
	fill(c, uintptr(unsafe.Pointer(&host[0])))
	c.widthInBytes, c.height = uintptr(width), uintptr(height)
	r := cuResult(b.drv.cuMemcpy2DAsync.call(uintptr(unsafe.Pointer(c)), uintptr(s)))
	runtime.KeepAlive(c)
	runtime.KeepAlive(host)
	return b.check("cuMemcpy2DAsync", fmt.Sprintf("%d rows of %s", height, formatBytes(uint64(width))), r)
}
