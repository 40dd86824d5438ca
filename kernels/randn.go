package kernels

import (
	"math"

	"github.com/gluaproject/glua/device"
)

// RandN fills x with standard normal values, counter-based as Rand is:
// element i is a function of the counter c = seed*golden + offset + i
// alone. float64 takes the normal quantile of a uniform drawn from h,
// Rand's hash of c, in float64:
//
//	u = (h>>12 + 1/2) · 2^-52    // in (0, 1), never 0 or 1, symmetric about 1/2
//	z = Φ⁻¹(u)                   // Wichura's AS 241 (PPND16), |z| < 8.2
//
// float32, float16 and bfloat16 take Box–Muller in float32
// (normal32Pair), the 2-byte floats rounded from there as Rand's values
// are. Counters 2q and 2q+1 are the two values of pair q, from one hash
// h = mix64(q):
//
//	u1 = (h>>40 + 1) · 2^-24             // in (0, 1], exact
//	k  = h>>16 & (2^24 - 1)              // the angle 2π·k/2^24
//	r  = √(-2·log u1)                    // at most 5.77
//	z(2q) = r·cos(2π·k/2^24), z(2q+1) = r·sin(2π·k/2^24)
//
// A pair costs one hash, one logarithm, one square root and two short
// polynomials, half of each per element, where the quantile cost a
// logarithm and a polynomial of degree 8 per element (2^28 float32 on an
// H100: 0.95 ms that way, 0.55 in pairs, 0.37 for rand) and the float64
// one some 120 float64 operations with a branch that splits almost every
// warp. Which values a call draws still depends on its counters alone: a
// call that starts or ends inside a pair computes the pair and keeps its
// half.
//
// The GPU must give the same bits, and a library's log, sqrt, sin or cos
// need not round as Go's do, so every function is spelled out in
// operations that IEEE 754 rounds exactly: each product, sum and quotient
// rounded on its own (mul_rn, add_rn and div_rn in rand.cu; float64 or
// float32 conversions here, which keep Go from fusing), the float32
// polynomials' fused multiply-adds rounded once (fma_rn there, fma32
// here), square roots correctly rounded on both sides, the logarithm
// fdlibm's (Go's math.log; in float32 with FreeBSD's logf polynomial),
// and sin and cos Cephes's minimax polynomials on an exactly reduced
// argument (sinCosTurn). The constants are the same literals in both
// files, a test checks.
func RandN(dt device.DType, x []byte, seed, offset uint64) error {
	if err := checkRand("randn", dt, x); err != nil {
		return err
	}
	if dt == device.Float64 {
		fillCounters(dt, x, seed*golden+offset, normalAt)
		return nil
	}
	fillCounters(dt, x, seed*golden+offset, normal32Stream())
	return nil
}

// normalAt is the normal value of counter c.
func normalAt(c uint64) float64 {
	u := (float64(mix64(c)>>12) + 0.5) * 0x1p-52 // each step exact
	return normalQuantile(u)
}

// as241 are the coefficients of Wichura's AS 241 (PPND16), highest degree
// first: numerator and denominator for |u - 1/2| <= 0.425, for r =
// sqrt(-log(min(u, 1-u))) <= 5 (in r - 1.6), and beyond (in r - 5). Its
// relative error is about 1e-16. rand.cu holds the same literals.
var as241 = [6][8]float64{
	{2509.0809287301226727, 33430.575583588128105, 67265.770927008700853, 45921.953931549871457,
		13731.693765509461125, 1971.5909503065514427, 133.14166789178437745, 3.387132872796366608},
	{5226.495278852854561, 28729.085735721942674, 39307.89580009271061, 21213.794301586595867,
		5394.1960214247511077, 687.1870074920579083, 42.313330701600911252, 1.0},
	{7.7454501427834140764e-4, 0.0227238449892691845833, 0.24178072517745061177, 1.27045825245236838258,
		3.64784832476320460504, 5.7694972214606914055, 4.6303378461565452959, 1.42343711074968357734},
	{1.05075007164441684324e-9, 5.475938084995344946e-4, 0.0151986665636164571966, 0.14810397642748007459,
		0.68976733498510000455, 1.6763848301838038494, 2.05319162663775882187, 1.0},
	{2.01033439929228813265e-7, 2.71155556874348757815e-5, 0.0012426609473880784386, 0.026532189526576123093,
		0.29656057182850489123, 1.7848265399172913358, 5.4637849111641143699, 6.6579046435011037772},
	{2.04426310338993978564e-15, 1.4215117583164458887e-7, 1.8463183175100546818e-5, 7.868691311456132591e-4,
		0.0148753612908506148525, 0.13692988092273580531, 0.59983220655588793769, 1.0},
}

// The other constants of normalQuantile and logUnit, by their names in
// rand.cu's #defines.
const (
	as241Split1 = 0.425    // GLUA_AS241_SPLIT1: the central region's half-width
	as241Const1 = 0.180625 // GLUA_AS241_CONST1: 0.425²
	as241Split2 = 5.0      // GLUA_AS241_SPLIT2
	as241Const2 = 1.6      // GLUA_AS241_CONST2

	sqrtHalf = 0.70710678118654752440     // GLUA_SQRT_HALF
	ln2Hi    = 6.93147180369123816490e-01 // GLUA_LN2_HI: 0x3fe62e42fee00000
	ln2Lo    = 1.90821492927058770002e-10 // GLUA_LN2_LO: 0x3dea39ef35793c76
	logL1    = 6.666666666666735130e-01   // GLUA_LOG_L1
	logL2    = 3.999999999940941908e-01   // GLUA_LOG_L2
	logL3    = 2.857142874366239149e-01   // GLUA_LOG_L3
	logL4    = 2.222219843214978396e-01   // GLUA_LOG_L4
	logL5    = 1.818357216161805012e-01   // GLUA_LOG_L5
	logL6    = 1.531383769920937332e-01   // GLUA_LOG_L6
	logL7    = 1.479819860511658591e-01   // GLUA_LOG_L7
)

// normalQuantile is Φ⁻¹(u) for u in (0, 1), as AS 241 computes it.
func normalQuantile(u float64) float64 {
	q := u - 0.5
	if math.Abs(q) <= as241Split1 {
		r := as241Const1 - float64(q*q)
		return float64(q*horner(&as241[0], r)) / horner(&as241[1], r)
	}
	r := u
	if q > 0 {
		r = 1 - u // exact for u in [1/2, 1]
	}
	r = math.Sqrt(-logUnit(r))
	var z float64
	if r <= as241Split2 {
		r -= as241Const2
		z = horner(&as241[2], r) / horner(&as241[3], r)
	} else {
		r -= as241Split2
		z = horner(&as241[4], r) / horner(&as241[5], r)
	}
	if q < 0 {
		return -z
	}
	return z
}

// horner is the polynomial with coefficients c (highest degree first) at
// x, each product rounded before its sum.
func horner(c *[8]float64, x float64) float64 {
	p := c[0]
	for _, v := range c[1:] {
		p = float64(p*x) + v
	}
	return p
}

// logUnit is log(x) for a normal x in (0, 1): fdlibm's e_log.c as Go's
// math.log has it, the products rounded explicitly. x = f1·2^k with f1 in
// [√½, √2); log(f1) = 2·atanh(s), s = (f1-1)/(f1+1), by a polynomial in s².
func logUnit(x float64) float64 {
	b := math.Float64bits(x)
	ki := int64(b>>52) - 1022 // x = f1·2^ki with f1 in [1/2, 1)
	f1 := math.Float64frombits(b&(1<<52-1) | 1022<<52)
	if f1 < sqrtHalf {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	s := f / (2 + f)
	s2 := float64(s * s)
	s4 := float64(s2 * s2)
	t1 := float64(s2 * (logL1 + float64(s4*(logL3+float64(s4*(logL5+float64(s4*logL7)))))))
	t2 := float64(s4 * (logL2 + float64(s4*(logL4+float64(s4*logL6)))))
	R := t1 + t2
	hfsq := float64(float64(0.5*f) * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+R)) + float64(k*ln2Lo))) - f)
}

// normal32Bits are the float32 constants of normal32Pair, sinCosTurn and
// logUnit32, as bits, so that no decimal conversion can differ between Go
// and rand.cu's glua_randn32 table, which holds the same words in the
// same order (a test checks).
var normal32Bits = [...]uint32{
	// sin(π/4·x)/x and cos(π/4·x) - 1 for x in [-1, 1], polynomials in
	// x², highest degree first: Cephes's sinf and cosf minimax
	// coefficients for [-π/4, π/4], each times (π/4)^degree
	0xb816e42d, 0x3b233002, 0xbda55ddf, 0x3f490fdb,
	0x366d6618, 0xb9aae4f0, 0x3c81e0f4, 0xbe9de9e6,
	// logf's √½, ln2 split in two, and the polynomial Lg1..Lg4 in s²
	// (FreeBSD's e_logf.c, |error| < 2^-34.24)
	0x3f3504f3, 0x3f317180, 0x3717f7d1, 0x3f2aaaaa, 0x3eccce13, 0x3e91e9ee, 0x3e789e26,
}

// Indices into normal32Bits.
const (
	n32Sin      = 0 // to 3
	n32Cos      = 4 // to 7
	n32SqrtHalf = 8
	n32Ln2Hi    = 9
	n32Ln2Lo    = 10
	n32Lg1      = 11 // to 14: Lg1..Lg4
)

func n32(i int) float32 { return math.Float32frombits(normal32Bits[i]) }

// normal32Pair is the pair of float32 normal values of pair q, those of
// counters 2q and 2q+1: Box–Muller on the two uniforms of RandN's comment,
// each operation rounded to float32 as the device rounds it.
func normal32Pair(q uint64) (z0, z1 float32) {
	h := mix64(q)
	u1 := float32(h>>40+1) * 0x1p-24                     // exact: at most 2^24
	r := float32(math.Sqrt(float64(-2 * logUnit32(u1)))) // float64's root rounds to float32's
	sin, cos := sinCosTurn(uint32(h>>16) & (1<<24 - 1))
	return float32(r * cos), float32(r * sin)
}

// normal32Stream is normal32Pair for one counter at a time, in increasing
// order: it keeps the last pair, so that a run of counters costs one
// pair each two.
func normal32Stream() func(c uint64) float64 {
	var pair [2]float32
	at, have := uint64(0), false
	return func(c uint64) float64 {
		if !have || c>>1 != at {
			at, have = c>>1, true
			pair[0], pair[1] = normal32Pair(at)
		}
		return float64(pair[c&1])
	}
}

// sinCosTurn is sin and cos of 2π·k/2^24, for k < 2^24. The reduction is
// exact: k is j quarter turns (the nearest) and x eighths of a turn, with
// x = (k - j·2^22)·2^-21 in [-1, 1) an integer scaled by a power of two,
// so no multiple of π is ever rounded; the polynomials take it from there.
func sinCosTurn(k uint32) (sin, cos float32) {
	j := (k + 1<<21) >> 22 // 0 to 4
	x := float32(int32(k)-int32(j<<22)) * 0x1p-21
	x2 := float32(x * x)
	s, c := n32(n32Sin), n32(n32Cos)
	for i := 1; i < 4; i++ {
		s = fma32(s, x2, n32(n32Sin+i))
		c = fma32(c, x2, n32(n32Cos+i))
	}
	s = float32(s * x)
	c = fma32(c, x2, 1)
	switch j & 3 {
	case 0:
		return s, c
	case 1:
		return c, -s
	case 2:
		return -s, -c
	}
	return -c, s
}

// logUnit32 is log(x) for a normal float32 x in (0, 1]: logUnit's
// reduction and formula in float32, with logf's shorter polynomial, a
// product and a sum fused where the formula has one.
func logUnit32(x float32) float32 {
	b := math.Float32bits(x)
	ki := int32(b>>23) - 126 // x = f1·2^ki with f1 in [1/2, 1)
	f1 := math.Float32frombits(b&(1<<23-1) | 126<<23)
	if f1 < n32(n32SqrtHalf) {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float32(ki)
	s := f / (2 + f)
	z := float32(s * s)
	w := float32(z * z)
	t2 := float32(z * fma32(w, n32(n32Lg1+2), n32(n32Lg1)))
	R := fma32(w, fma32(w, n32(n32Lg1+3), n32(n32Lg1+1)), t2)
	hfsq := float32(float32(0.5*f) * f)
	return fma32(k, n32(n32Ln2Hi), -((hfsq - fma32(s, hfsq+R, float32(k*n32(n32Ln2Lo)))) - f))
}

// fma32 is x·y + z rounded once to float32, as CUDA's fma.rn.f32 (C's
// fmaf) gives it, for finite operands and a result that is neither
// subnormal nor overflows. x·y is exact in float64 (48 bits), so the sum
// is rounded twice, to float64 and then to float32; the second rounding
// errs only when the first lands exactly halfway between two float32s
// and was inexact, and then the sum's exact remainder (Knuth's TwoSum)
// says which way to go.
func fma32(x, y, z float32) float32 {
	xy := float64(x) * float64(y)
	s := xy + float64(z)
	if math.Float64bits(s)&(1<<29-1) != 1<<28 {
		return float32(s)
	}
	zz := s - xy
	e := (xy - (s - zz)) + (float64(z) - zz) // xy + z = s + e exactly
	if e == 0 {
		return float32(s) // a true tie: to even
	}
	return float32(math.Nextafter(s, math.Copysign(math.Inf(1), e)))
}
