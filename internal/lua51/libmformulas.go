package lua51

import "math"

// log10, sinh, cosh and tanh are glibc's, which are not correctly
// rounded (a tenth to a sixth of their results differ from the nearest
// double): they are computed here as glibc computes them, from its exp,
// log and expm1 and with its constants, so that they round as glibc's do.
// Go's math.Expm1 is the same algorithm as glibc's expm1.

// Log10 is glibc's log10: log10(x) = k log10(2) + log(m)/ln(10) for
// x = m 2^k, m in [1, 2), or [0.5, 1) below 1, with log10(2) in a high
// part of 40 bits, whose product with k is exact, and a low part.
func Log10(x float64) float64 {
	if v, special := logSpecial(x); special {
		return v
	}
	b := math.Float64bits(x)
	k := 0
	if b>>52 == 0 { // subnormal
		x *= 0x1p54
		b = math.Float64bits(x)
		k = -54
	}
	k += int(b>>52) - 1023
	i := 0
	if k < 0 {
		i = 1
	}
	m := math.Float64frombits(b&(1<<52-1) | uint64(0x3ff-i)<<52)
	y := float64(k + i)
	z := y*log10Of2Lo + invLn10*Log(m)
	return z + y*log10Of2Hi
}

const (
	invLn10    = 0x1.bcb7b1526e50ep-2  // 1/ln(10), rounded
	log10Of2Hi = 0x1.34413509f6p-2     // log10(2) to 40 bits
	log10Of2Lo = 0x1.9fef311f12b36p-42 // log10(2) - log10Of2Hi, rounded
)

// highWord is the top 32 bits of |x|, which glibc's thresholds compare.
func highWord(x float64) uint32 { return uint32(math.Float64bits(x)>>32) &^ (1 << 31) }

// Sinh is glibc's sinh.
func Sinh(x float64) float64 {
	h := 0.5
	if x < 0 {
		h = -0.5
	}
	ax := math.Abs(x)
	switch ix := highWord(x); {
	case ix >= 0x7ff00000:
		return x + x
	case ix < 0x40360000: // |x| < 22
		if ix < 0x3e300000 { // |x| < 2^-28
			return x
		}
		t := math.Expm1(ax)
		if ix < 0x3ff00000 {
			return h * (2*t - t*t/(t+1))
		}
		return h * (t + t/(t+1))
	case ix < 0x40862e42: // |x| < log(DBL_MAX)
		return h * Exp(ax)
	case ax <= overflowThreshold:
		w := Exp(0.5 * ax)
		return h * w * w
	}
	return x * math.Inf(1)
}

// Cosh is glibc's cosh.
func Cosh(x float64) float64 {
	ax := math.Abs(x)
	switch ix := highWord(x); {
	case ix >= 0x7ff00000:
		return x * x
	case ix < 0x3fd62e43: // |x| < ln(2)/2
		if ix < 0x3c800000 {
			return 1
		}
		t := math.Expm1(ax)
		w := 1 + t
		return 1 + (t*t)/(w+w)
	case ix < 0x40360000: // |x| < 22
		t := Exp(ax)
		return 0.5*t + 0.5/t
	case ix < 0x40862e42:
		return 0.5 * Exp(ax)
	case ax <= overflowThreshold:
		w := Exp(0.5 * ax)
		t := 0.5 * w
		return t * w
	}
	return math.Inf(1)
}

// overflowThreshold is the largest |x| whose sinh and cosh are finite.
const overflowThreshold = 0x1.633ce8fb9f87dp+9

// Tanh is glibc's tanh.
func Tanh(x float64) float64 {
	ix := highWord(x)
	if ix >= 0x7ff00000 {
		if x != x {
			return x + x
		}
		return math.Copysign(1, x)
	}
	var z float64
	switch ax := math.Abs(x); {
	case x == 0:
		return x
	case ix < 0x3c800000: // |x| < 2^-55
		return x * (1 + x)
	case ix >= 0x40360000: // |x| >= 22
		z = 1
	case ix >= 0x3ff00000:
		t := math.Expm1(2 * ax)
		z = 1 - 2/(t+2)
	default:
		t := math.Expm1(-2 * ax)
		z = -t / (t + 2)
	}
	return math.Copysign(z, x)
}
