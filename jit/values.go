package jit

import (
	"encoding/binary"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// HostArray is an array argument of Run: its elements in host memory,
// row-major, and its shape.
type HostArray struct {
	DType device.DType
	Shape []int
	Data  []byte
}

// load reads element i as the kernel computes it: floats as float64
// (float32, float16 and bfloat16 exactly), integers as int64.
func load(d device.DType, b []byte, i int) (float64, int64) {
	switch d {
	case device.Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))), 0
	case device.Float64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])), 0
	case device.Float16:
		return float64(device.Float16Value(binary.LittleEndian.Uint16(b[2*i:]))), 0
	case device.BFloat16:
		return float64(device.BFloat16Value(binary.LittleEndian.Uint16(b[2*i:]))), 0
	case device.Int32:
		return 0, int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	case device.Int64:
		return 0, int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return 0, int64(b[i])
}

// storeFloat writes a float into element i as the CUDA translation does:
// through float32 for the narrow floats, saturating into integers.
func storeFloat(d device.DType, b []byte, i int, v float64) {
	switch d {
	case device.Float32:
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
	case device.Float64:
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	case device.Float16:
		binary.LittleEndian.PutUint16(b[2*i:], device.Float16Bits(float32(v)))
	case device.BFloat16:
		binary.LittleEndian.PutUint16(b[2*i:], device.BFloat16Bits(float32(v)))
	case device.Int32:
		binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(saturate(v, math.MinInt32, math.MaxInt32))))
	case device.Int64:
		binary.LittleEndian.PutUint64(b[8*i:], uint64(saturate(v, math.MinInt64, math.MaxInt64)))
	default:
		b[i] = uint8(saturate(v, 0, 255))
	}
}

// storeInt writes an integer into element i; integers wrap, as C's casts.
func storeInt(d device.DType, b []byte, i int, v int64) {
	switch d {
	case device.Int32:
		binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(v)))
	case device.Int64:
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	case device.Uint8:
		b[i] = uint8(v)
	case device.Float64:
		storeFloat(d, b, i, float64(v))
	default:
		// rounded once to float32, as C's (float) of a long long (through
		// float64 an integer past 2^53 would round twice), then narrowed
		storeFloat(d, b, i, float64(float32(v)))
	}
}

// saturate is sat_i32/sat_i64/sat_u8 of the prelude: truncate toward zero,
// clamp, NaN to 0.
func saturate(v float64, lo, hi int64) int64 {
	switch {
	case v != v:
		return 0
	case v <= float64(lo):
		return lo
	case v >= float64(hi):
		return hi
	}
	return int64(v)
}

// atomicAddFloat and atomicAddInt add to element i with compare-and-swap,
// as the GPU's atomicAdd.
func atomicAddFloat(d device.DType, b []byte, i int, v float64) {
	if d == device.Float64 {
		p := (*uint64)(unsafe.Pointer(&b[8*i]))
		for {
			old := atomic.LoadUint64(p)
			if atomic.CompareAndSwapUint64(p, old, math.Float64bits(math.Float64frombits(old)+v)) {
				return
			}
		}
	}
	p := (*uint32)(unsafe.Pointer(&b[4*i]))
	for {
		old := atomic.LoadUint32(p)
		if atomic.CompareAndSwapUint32(p, old, math.Float32bits(math.Float32frombits(old)+float32(v))) {
			return
		}
	}
}

func atomicAddInt(d device.DType, b []byte, i int, v int64) {
	if d == device.Int64 {
		atomic.AddUint64((*uint64)(unsafe.Pointer(&b[8*i])), uint64(v))
		return
	}
	atomic.AddUint32((*uint32)(unsafe.Pointer(&b[4*i])), uint32(int32(v)))
}
