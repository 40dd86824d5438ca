package kernels

import (
	"fmt"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// hostLittleEndian decides whether stored bytes can be read in place as Go
// numbers; elsewhere view decodes them.
var hostLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

type word interface {
	uint8 | uint16 | int32 | int64 | float32 | float64
}

func noFlush() {}

// view reads b as a []T. Allocations of the CPU backend are 256-byte aligned
// and views of them element-aligned, so this is normally b's own memory and
// flush does nothing. A misaligned slice (or a big-endian host) gets a
// decoded copy instead, and flush stores it back into b; the result is the
// same either way.
func view[T word](b []byte) (v []T, flush func()) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	n := len(b) / size
	if n == 0 {
		return nil, noFlush
	}
	if hostLittleEndian && uintptr(unsafe.Pointer(&b[0]))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n), noFlush
	}
	v = make([]T, n)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), n*size)
	copy(raw, b)
	if !hostLittleEndian {
		swapBytes(raw, size)
	}
	return v, func() {
		copy(b, raw)
		if !hostLittleEndian {
			swapBytes(b[:n*size], size)
		}
	}
}

func swapBytes(b []byte, size int) {
	for i := 0; i+size <= len(b); i += size {
		for j := 0; j < size/2; j++ {
			b[i+j], b[i+size-1-j] = b[i+size-1-j], b[i+j]
		}
	}
}

// halfCodec returns the exact widening and the round-to-nearest-even
// narrowing of a 2-byte float type.
func halfCodec(dt device.DType) (load func(uint16) float32, store func(float32) uint16) {
	if dt == device.BFloat16 {
		return device.BFloat16Value, device.BFloat16Bits
	}
	return device.Float16Value, device.Float16Bits
}

// count checks that b holds whole elements of a valid dtype and returns how
// many.
func count(op string, dt device.DType, b []byte) int {
	if !dt.Valid() {
		panic(fmt.Sprintf("kernels.%s: invalid dtype %s", op, dt))
	}
	if len(b)%dt.Size() != 0 {
		panic(fmt.Sprintf("kernels.%s: %d bytes is not a whole number of %s elements", op, len(b), dt))
	}
	return len(b) / dt.Size()
}

// same checks that two operands hold the same number of elements.
func same(op string, dt device.DType, y, x []byte) int {
	ny, nx := count(op, dt, y), count(op, dt, x)
	if ny != nx {
		panic(fmt.Sprintf("kernels.%s: operands have %d and %d elements", op, ny, nx))
	}
	return ny
}
