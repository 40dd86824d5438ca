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

// atomicUpdate replaces element i of an array of d (4 or 8 bytes wide)
// by update(old) in one indivisible step, a compare-and-swap loop on the
// element's bits, and returns the old bits; update says false to leave
// the element as it is. The threads of a launch run in parallel, so every
// atomic goes through here.
func atomicUpdate(d device.DType, b []byte, i int, update func(old uint64) (uint64, bool)) uint64 {
	if d.Size() == 8 {
		p := (*uint64)(unsafe.Pointer(&b[8*i]))
		for {
			old := atomic.LoadUint64(p)
			nw, write := update(old)
			if !write || atomic.CompareAndSwapUint64(p, old, nw) {
				return old
			}
		}
	}
	p := (*uint32)(unsafe.Pointer(&b[4*i]))
	for {
		old := atomic.LoadUint32(p)
		nw, write := update(uint64(old))
		if !write || atomic.CompareAndSwapUint32(p, old, uint32(nw)) {
			return uint64(old)
		}
	}
}

// atomicOp is the update of kernels.atomic_<op> on an element of d:
// old, v and expected are bits of the element's dtype (v and expected
// converted to it as a store converts). Floats: sub adds -v (a - b is
// a + (-b) exactly, as the GPU computes it); max and min leave the
// element as it is when it or v is a NaN, and replace it only by a
// strictly greater (smaller) v, as Numba's. Integers wrap.
func atomicOp(op string, d device.DType) func(old, v, expected uint64) (uint64, bool) {
	if !d.IsFloat() {
		return atomicIntOp(op, d)
	}
	get, put := math.Float64frombits, math.Float64bits
	if d == device.Float32 {
		get = func(b uint64) float64 { return float64(math.Float32frombits(uint32(b))) }
		put = func(f float64) uint64 { return uint64(math.Float32bits(float32(f))) }
	}
	switch op {
	case "add", "sub":
		sign := 1.0
		if op == "sub" {
			sign = -1
		}
		// float32 + float32 rounded once to float32 is float32 addition
		nan := arithNaN(computeType(d))
		return func(old, v, _ uint64) (uint64, bool) {
			o, x := get(old), get(v)
			if r := o + sign*x; r == r {
				return put(r), true
			}
			return put(nan(o, x)), true
		}
	case "max", "min":
		max := op == "max"
		return func(old, v, _ uint64) (uint64, bool) {
			o, x := get(old), get(v)
			return v, x == x && (max && o < x || !max && o > x)
		}
	}
	return func(_, v, _ uint64) (uint64, bool) { return v, true } // exch
}

func atomicIntOp(op string, d device.DType) func(old, v, expected uint64) (uint64, bool) {
	get, put := func(b uint64) int64 { return int64(b) }, func(i int64) uint64 { return uint64(i) }
	if d == device.Int32 {
		get = func(b uint64) int64 { return int64(int32(uint32(b))) }
		put = func(i int64) uint64 { return uint64(uint32(i)) }
	}
	switch op {
	case "add":
		return func(old, v, _ uint64) (uint64, bool) { return put(get(old) + get(v)), true }
	case "sub":
		return func(old, v, _ uint64) (uint64, bool) { return put(get(old) - get(v)), true }
	case "max":
		return func(old, v, _ uint64) (uint64, bool) { return v, get(v) > get(old) }
	case "min":
		return func(old, v, _ uint64) (uint64, bool) { return v, get(v) < get(old) }
	case "cas":
		return func(old, v, expected uint64) (uint64, bool) { return v, old == expected }
	}
	return func(_, v, _ uint64) (uint64, bool) { return v, true } // exch
}
