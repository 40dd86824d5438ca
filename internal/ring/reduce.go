package ring

import (
	"encoding/binary"
	"math"

	"github.com/gluaproject/glua/device"
)

// Op is a reduction operation: device.ReduceOp, the reductions every
// backend's collectives take, so that the CPU backend passes its callers'
// op through as it is.
type Op = device.ReduceOp

const (
	Sum  = device.ReduceSum
	Prod = device.ReduceProd
	Max  = device.ReduceMax
	Min  = device.ReduceMin
	// Avg is the sum divided by Size. Floats divide once, after the sum
	// (float16 and bfloat16 in float32, then rounded). Integers sum in
	// their own type, wrapping on overflow as Sum does, and divide with
	// truncation toward zero, as NCCL's ncclAvg does for integer types.
	Avg = device.ReduceAvg
)

// Ops lists every reduction in the order the documentation gives them.
var Ops = []Op{Sum, Prod, Max, Min, Avg}

var le = binary.LittleEndian

// combine sets dst[i] = dst[i] op src[i] for every element. Avg combines as
// Sum; finishAvg divides at the end. float16 and bfloat16 go through
// float32 and are rounded back at every step, as NCCL does on the GPU, so a
// result depends on the order of the steps, which the ring fixes.
func combine(dt device.DType, op Op, dst, src []byte) {
	if op == Avg {
		op = Sum
	}
	switch dt {
	case device.Float32:
		for i := 0; i < len(dst); i += 4 {
			a := math.Float32frombits(le.Uint32(dst[i:]))
			b := math.Float32frombits(le.Uint32(src[i:]))
			le.PutUint32(dst[i:], math.Float32bits(apply(op, a, b)))
		}
	case device.Float64:
		for i := 0; i < len(dst); i += 8 {
			a := math.Float64frombits(le.Uint64(dst[i:]))
			b := math.Float64frombits(le.Uint64(src[i:]))
			le.PutUint64(dst[i:], math.Float64bits(apply(op, a, b)))
		}
	case device.Float16, device.BFloat16:
		load, store := device.Float16Value, device.Float16Bits
		if dt == device.BFloat16 {
			load, store = device.BFloat16Value, device.BFloat16Bits
		}
		for i := 0; i < len(dst); i += 2 {
			a, b := load(le.Uint16(dst[i:])), load(le.Uint16(src[i:]))
			le.PutUint16(dst[i:], store(apply(op, a, b)))
		}
	case device.Int32:
		for i := 0; i < len(dst); i += 4 {
			a, b := int32(le.Uint32(dst[i:])), int32(le.Uint32(src[i:]))
			le.PutUint32(dst[i:], uint32(apply(op, a, b)))
		}
	case device.Int64:
		for i := 0; i < len(dst); i += 8 {
			a, b := int64(le.Uint64(dst[i:])), int64(le.Uint64(src[i:]))
			le.PutUint64(dst[i:], uint64(apply(op, a, b)))
		}
	case device.Uint8:
		for i := range dst {
			dst[i] = apply(op, dst[i], src[i])
		}
	default:
		panic("ring.combine: invalid dtype " + dt.String())
	}
}

// apply is one step of a reduction. Max and Min return NaN when either side
// is NaN, as NCCL does, rather than Go's comparison, which would drop a NaN
// on one side and keep it on the other; a != a is false for integers.
func apply[T float32 | float64 | int32 | int64 | uint8](op Op, a, b T) T {
	switch op {
	case Sum:
		return a + b
	case Prod:
		return a * b
	case Max:
		if a != a || a > b {
			return a
		}
		return b
	case Min:
		if a != a || a < b {
			return a
		}
		return b
	}
	panic("ring.apply: invalid op " + op.String())
}

// finishAvg divides the sums in buf by n, the number of ranks.
func finishAvg(dt device.DType, buf []byte, n int) {
	switch dt {
	case device.Float32:
		for i := 0; i < len(buf); i += 4 {
			v := math.Float32frombits(le.Uint32(buf[i:]))
			le.PutUint32(buf[i:], math.Float32bits(v/float32(n)))
		}
	case device.Float64:
		for i := 0; i < len(buf); i += 8 {
			v := math.Float64frombits(le.Uint64(buf[i:]))
			le.PutUint64(buf[i:], math.Float64bits(v/float64(n)))
		}
	case device.Float16, device.BFloat16:
		load, store := device.Float16Value, device.Float16Bits
		if dt == device.BFloat16 {
			load, store = device.BFloat16Value, device.BFloat16Bits
		}
		for i := 0; i < len(buf); i += 2 {
			le.PutUint16(buf[i:], store(load(le.Uint16(buf[i:]))/float32(n)))
		}
	case device.Int32:
		for i := 0; i < len(buf); i += 4 {
			le.PutUint32(buf[i:], uint32(int32(int64(int32(le.Uint32(buf[i:])))/int64(n))))
		}
	case device.Int64:
		for i := 0; i < len(buf); i += 8 {
			le.PutUint64(buf[i:], uint64(int64(le.Uint64(buf[i:]))/int64(n)))
		}
	case device.Uint8:
		for i := range buf {
			buf[i] = uint8(uint64(buf[i]) / uint64(n))
		}
	default:
		panic("ring.finishAvg: invalid dtype " + dt.String())
	}
}
