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
	if err := b.refuseInCapture("cuMemcpy2DAsync", s, false); err != nil {
		return err
	}
	if width <= 0 || height <= 0 {
		return nil
	}
	if pitch < width || len(src) != (height-1)*pitch+width {
		return fmt.Errorf("cuda: UploadBlockAsync: %d rows of %d bytes, %d apart, are not %d bytes", height, width, pitch, len(src))
	}
	if !b.isPinned(src) {
		return fmt.Errorf("cuda: UploadBlockAsync: the source is not pinned memory (one buffer from AllocHost, or one range from RegisterHost)")
	}
	if pitch == width {
		return b.UploadAsync(dst, src, s)
	}
	if b.drv.cuMemcpy2DAsync == 0 {
		return fmt.Errorf("cuda: UploadBlockAsync: the driver has no cuMemcpy2DAsync")
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	c := &memcpy2D{
		srcMemoryType: cuMemoryTypeHost, srcHost: uintptr(unsafe.Pointer(&src[0])), srcPitch: uintptr(pitch),
		dstMemoryType: cuMemoryTypeDevice, dstDevice: uint64(dst), dstPitch: uintptr(width),
		widthInBytes: uintptr(width), height: uintptr(height),
	}
	r := cuResult(b.drv.cuMemcpy2DAsync.call(uintptr(unsafe.Pointer(c)), uintptr(s)))
	runtime.KeepAlive(c)
	runtime.KeepAlive(src)
	return b.check("cuMemcpy2DAsync", fmt.Sprintf("%d rows of %s", height, formatBytes(uint64(width))), r)
}
