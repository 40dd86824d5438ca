package cuda

import (
	"fmt"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// The methods below implement pool.AsyncSource on the device's default
// memory pool (cuMemAllocFromPoolAsync), the driver's stream-ordered
// allocator behind the "cuda" pool strategy.

func (b *Backend) requireMemPool(call string) error {
	if b.memPool == 0 {
		return fmt.Errorf("cuda: %s: this driver or device has no stream-ordered memory pool (CUDA 11.2+ and CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED needed)", call)
	}
	return nil
}

// AsyncSupported reports whether AllocAsync and friends can work here.
func (b *Backend) AsyncSupported() bool { return b.memPool != 0 }

// AllocAsync allocates nbytes from the device's memory pool, usable by
// work queued on s after this call.
func (b *Backend) AllocAsync(nbytes uint64, s device.Stream) (device.Ptr, error) {
	if err := b.requireMemPool("AllocAsync"); err != nil {
		return 0, err
	}
	if err := b.begin(); err != nil {
		return 0, err
	}
	defer b.end()
	var p uint64
	r := cuResult(b.drv.cuMemAllocFromPoolAsync.call(uintptr(unsafe.Pointer(&p)), uintptr(max(nbytes, 1)), b.memPool, uintptr(s)))
	if err := b.check("cuMemAllocFromPoolAsync", formatBytes(nbytes), r); err != nil {
		return 0, err
	}
	return device.Ptr(p), nil
}

// FreeAsync returns p to the pool once the work queued on s so far is done.
func (b *Backend) FreeAsync(p device.Ptr, s device.Stream) error {
	if err := b.requireMemPool("FreeAsync"); err != nil {
		return err
	}
	if p == 0 {
		return nil
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	return b.check("cuMemFreeAsync", "", cuResult(b.drv.cuMemFreeAsync.call(uintptr(p), uintptr(s))))
}

// SetReleaseThreshold sets how many bytes the pool keeps reserved across
// synchronisations instead of returning them to the device.
func (b *Backend) SetReleaseThreshold(nbytes uint64) error {
	if err := b.requireMemPool("SetReleaseThreshold"); err != nil {
		return err
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	v := nbytes // cuuint64_t, passed by address
	r := cuResult(b.drv.cuMemPoolSetAttribute.call(b.memPool, memPoolAttrReleaseThreshold, uintptr(unsafe.Pointer(&v))))
	return b.check("cuMemPoolSetAttribute", "RELEASE_THRESHOLD "+formatBytes(nbytes), r)
}

// PoolReserved is the memory the pool holds from the device, in use or
// cached.
func (b *Backend) PoolReserved() (uint64, error) {
	if err := b.requireMemPool("PoolReserved"); err != nil {
		return 0, err
	}
	if err := b.begin(); err != nil {
		return 0, err
	}
	defer b.end()
	var v uint64 // cuuint64_t
	r := cuResult(b.drv.cuMemPoolGetAttribute.call(b.memPool, memPoolAttrReservedCurrent, uintptr(unsafe.Pointer(&v))))
	if err := b.check("cuMemPoolGetAttribute", "RESERVED_MEM_CURRENT", r); err != nil {
		return 0, err
	}
	return v, nil
}

// TrimTo releases the pool's unused memory until it holds at most keep
// bytes, or nothing unused is left.
func (b *Backend) TrimTo(keep uint64) error {
	if err := b.requireMemPool("TrimTo"); err != nil {
		return err
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	return b.check("cuMemPoolTrimTo", formatBytes(keep), cuResult(b.drv.cuMemPoolTrimTo.call(b.memPool, uintptr(keep))))
}
