package device

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Element access on raw little-endian bytes. These are the edges where Lua
// numbers, Go values and stored bits meet; hot loops use typed slices instead.

// Get reads element i of b, stored as d, as a float64.
func Get(d DType, b []byte, i int) float64 {
	switch d {
	case Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	case Float64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	case Float16:
		return float64(Float16Value(binary.LittleEndian.Uint16(b[2*i:])))
	case BFloat16:
		return float64(BFloat16Value(binary.LittleEndian.Uint16(b[2*i:])))
	case Int32:
		return float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	case Int64:
		return float64(int64(binary.LittleEndian.Uint64(b[8*i:])))
	case Uint8:
		return float64(b[i])
	}
	panic("device.Get: invalid dtype " + d.String())
}

// Set writes v into element i of b, stored as d. Integer types truncate
// toward zero and saturate at their range, as a C cast of an in-range value
// would; NaN becomes 0.
func Set(d DType, b []byte, i int, v float64) {
	switch d {
	case Float32:
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
	case Float64:
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	case Float16:
		binary.LittleEndian.PutUint16(b[2*i:], Float16Bits(float32(v)))
	case BFloat16:
		binary.LittleEndian.PutUint16(b[2*i:], BFloat16Bits(float32(v)))
	case Int32:
		binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(clampInt(v, math.MinInt32, math.MaxInt32))))
	case Int64:
		binary.LittleEndian.PutUint64(b[8*i:], uint64(clampInt(v, math.MinInt64, math.MaxInt64)))
	case Uint8:
		b[i] = uint8(clampInt(v, 0, 255))
	default:
		panic("device.Set: invalid dtype " + d.String())
	}
}

// CheckValue says why a number given for an element cannot be stored as d,
// or returns nil. A float dtype takes every number (beyond its range it
// rounds to an infinity, as NumPy's does); an integer dtype takes a
// number whose truncation toward zero lies in its range. NumPy and
// PyTorch refuse a number out of an integer dtype's range, and PyTorch
// NaN and the infinities, where Set would saturate: that is for arrays
// converted to another dtype (kernels.copy), not for a number the caller
// wrote.
func CheckValue(d DType, v float64) error {
	var lo, hi float64 // hi is one past the largest value
	var los, his string
	switch d {
	case Int32:
		lo, hi, los, his = math.MinInt32, math.MaxInt32+1, "-2147483648", "2147483647"
	case Int64:
		lo, hi, los, his = math.MinInt64, 0x1p63, "-2^63", "2^63 - 1"
	case Uint8:
		lo, hi, los, his = 0, 256, "0", "255"
	default:
		return nil
	}
	switch t := math.Trunc(v); {
	case math.IsNaN(v):
		return fmt.Errorf("nan has no %s value", d)
	case t < lo || t >= hi:
		return fmt.Errorf("%s is out of %s's range, %s to %s", formatNumber(v), d, los, his)
	}
	return nil
}

// formatNumber writes v as Lua's tostring does.
func formatNumber(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return fmt.Sprintf("%.14g", v)
}

func clampInt(v float64, lo, hi float64) int64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v <= lo:
		if lo == math.MinInt64 {
			return math.MinInt64
		}
		return int64(lo)
	case v >= hi:
		if hi == math.MaxInt64 {
			return math.MaxInt64
		}
		return int64(hi)
	}
	return int64(v)
}
