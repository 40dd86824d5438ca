package device

import "math"

// Float16 and bfloat16 are stored as their raw 16 bits and converted at the
// edges (uploads, downloads, Lua numbers). Conversions round to nearest even,
// as the hardware's cvt.rn does, so host and device agree bit for bit.

// Float16Bits converts f to IEEE 754 binary16 bits, rounding to nearest even.
func Float16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b >> 23) & 0xff)
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN; keep NaN a NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127 > 15: // too large: infinity
		return sign | 0x7c00
	case exp-127 >= -14: // normal half
		e := uint32(exp - 127 + 15)
		m := mant >> 13
		rest := mant & 0x1fff
		h := uint32(sign) | e<<10 | m
		if rest > 0x1000 || (rest == 0x1000 && m&1 == 1) {
			h++ // may carry into the exponent, which is the right answer
		}
		return uint16(h)
	case exp-127 >= -25: // subnormal half
		mant |= 0x800000
		shift := uint32(-(exp - 127) - 14 + 13)
		m := mant >> shift
		rest := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || (rest == half && m&1 == 1) {
			m++
		}
		return sign | uint16(m)
	default:
		return sign
	}
}

// Float16Value converts binary16 bits to float32 exactly.
func Float16Value(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: value = mant * 2^-24
		v := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	default:
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	}
}

// BFloat16Bits converts f to bfloat16 bits, rounding to nearest even.
func BFloat16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7f800000 == 0x7f800000 && b&0x7fffff != 0 {
		return uint16(b>>16) | 0x40 // quiet NaN stays NaN
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BFloat16Value converts bfloat16 bits to float32 exactly.
func BFloat16Value(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }
