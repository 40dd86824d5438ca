package lua51

import (
	"math"
	"math/big"
	"sync"
)

// The math functions Lua 5.1 takes from C, as glibc computes them, for
// the math library and for the kernel language's evaluator (package jit).
// Go's math package differs from glibc's in the last bit for a tenth to a
// third of arguments, which showed in about one print in five hundred,
// and its log on amd64 is wrong for subnormal numbers (log(5e-324) is
// -709.09, not -744.44).
//
// Exp, Log, Sin, Cos, Tan, Atan, Asin and Acos are correctly rounded,
// which glibc's are in practice (its bounds are 0.51 to 0.55 units in the
// last place). Each works as pow does, in double-double arithmetic to
// about 100 bits, and rounds once at the end. Log10, Sinh, Cosh and Tanh
// follow glibc's own formulas (below).

// Pow is C's pow (pow.go).
func Pow(x, y float64) float64 { return pow(x, y) }

// Exp is C's exp.
func Exp(x float64) float64 {
	switch {
	case x != x:
		return x + x
	case x > 710:
		return math.Inf(1)
	case x < -746:
		return 0
	}
	return expDD(dd{x, 0})
}

// expDD is exp(z), rounded once, for |z.hi| <= 746: z = (256e + j)
// log(2)/256 + r with |r| <= log(2)/512, and exp(z) = 2^e * 2^(j/256) *
// exp(r).
func expDD(z dd) float64 {
	k := math.RoundToEven(z.hi * (256 / ln2.hi))
	p := twoProd(k, ln2.hi/256)
	r := twoSum(z.hi-p.hi, z.lo-p.lo-k*(ln2.lo/256))
	j := int(k) & 255
	v := exp2Table[j].add(exp2Table[j].mul(expm1Small(r)))
	return scale(v, (int(k)-j)/256)
}

// Log is C's log: -inf at zero, NaN below it.
func Log(x float64) float64 {
	switch {
	case x != x || x == math.Inf(1):
		return x + x
	case x == 0:
		return math.Inf(-1)
	case x < 0:
		return math.NaN() // libm gives it glibc's sign
	}
	r := logDD(x)
	return r.hi + r.lo
}

// Sin, Cos and Tan are C's sin, cos and tan: x = k pi/2 + r with
// |r| <= pi/4 (reduceHalfPi), and the function of r by its Taylor series
// in double-double.
func Sin(x float64) float64 {
	if math.Abs(x) < 0x1p-26 {
		return x // sin x = x - x^3/6 rounds to x, and keeps a zero's sign
	}
	if math.IsInf(x, 0) || x != x {
		return x - x
	}
	k, r := reduceHalfPi(x)
	return sinRounded(k, r)
}

func Cos(x float64) float64 {
	if math.Abs(x) < 0x1p-27 {
		return 1
	}
	if math.IsInf(x, 0) || x != x {
		return x - x
	}
	k, r := reduceHalfPi(x)
	return sinRounded(k+1, r) // cos x = sin(x + pi/2)
}

// sinQuadrant is sin(k pi/2 + r), and with fast, at sinFast's or
// cosFast's accuracy.
func sinQuadrant(k int, r dd, fast bool) dd {
	var v dd
	switch {
	case k&1 == 0 && fast:
		v = sinFast(r)
	case k&1 == 0:
		v = sinDD(r)
	case fast:
		v = cosFast(r)
	default:
		v = cosDD(r)
	}
	if k&2 != 0 {
		return v.neg()
	}
	return v
}

// sinRounded is the double nearest sin(k pi/2 + r): the fast
// evaluation's where its error cannot change the rounding, else the slow
// one's (Ziv's way).
func sinRounded(k int, r dd) float64 {
	if v := sinQuadrant(k, r, true); roundsAlike(v, fastError*math.Abs(v.hi)) {
		return v.hi
	}
	v := sinQuadrant(k, r, false)
	return v.hi + v.lo
}

// fastError bounds sinFast's and cosFast's error, relative to the result.
const fastError = 0x1p-60

// roundsAlike reports whether every number within e of v.hi + v.lo rounds
// to v.hi, for a v whose hi is its sum rounded.
func roundsAlike(v dd, e float64) bool {
	return v.hi+(v.lo+e) == v.hi && v.hi+(v.lo-e) == v.hi
}

// sinFast and cosFast are sin r and cos r for |r| <= pi/4 + a little,
// within fastError of the result: the series' first terms exactly as
// double-doubles, the rest, and r's low part, in doubles. They take a
// fifth of sinDD's and cosDD's time.
func sinFast(r dd) dd {
	rh := r.hi
	t := twoProd(rh, rh)
	th := t.hi
	r3 := twoProd(th, rh)
	r3lo := r3.lo + t.lo*rh // rh^3 = r3.hi + r3lo
	b := divideExactly(r3.hi, r3lo, 6)
	r5 := twoProd(r3.hi, th)
	c := divideExactly(r5.hi, r5.lo+r3lo*th+r3.hi*t.lo, 120)
	// rh^7/7! on: below 2^-14 of the result, so doubles keep 2^-65
	d := 0.0
	for n := 9; n >= 2; n-- {
		d = d*th + sinCoefficients[n].hi
	}
	d *= r5.hi * th
	// sin(rh + rl) = sin rh + rl cos rh
	rl := r.lo * (1 + th*(-0.5+th*(1.0/24-th/720)))
	s := twoSum(rh, -b.hi)
	s2 := twoSum(s.hi, c.hi)
	return fastTwoSum(s2.hi, s.lo+s2.lo+(-b.lo+c.lo+d+rl))
}

func cosFast(r dd) dd {
	rh := r.hi
	t := twoProd(rh, rh)
	th := t.hi
	t2 := twoProd(th, th)
	t2lo := t2.lo + 2*th*t.lo // t^2 = t2.hi + t2lo
	c := divideExactly(t2.hi, t2lo, 24)
	// t^3/6! on: below 2^-11 of the result
	d := 0.0
	for n := 10; n >= 2; n-- {
		d = d*th + cosCoefficients[n].hi
	}
	d *= t2.hi * th
	// cos(rh + rl) = cos rh - rl sin rh
	rl := -r.lo * rh * (1 + th*(-1.0/6+th*(1.0/120-th/5040)))
	s := twoSum(1, -th/2)
	s2 := twoSum(s.hi, c.hi)
	return fastTwoSum(s2.hi, s.lo+s2.lo+(-t.lo/2+c.lo+d+rl))
}

// divideExactly is (hi + lo)/k as a double-double, for a small integer k
// and |lo| well below |hi|: hi - k*q is exact with a fused multiply-add.
func divideExactly(hi, lo, k float64) dd {
	q := hi / k
	rem := math.FMA(-q, k, hi)
	return dd{q, (rem + lo) / k}
}

func Tan(x float64) float64 {
	if math.Abs(x) < 0x1p-27 {
		return x // tan x = x + x^3/3 rounds to x
	}
	if math.IsInf(x, 0) || x != x {
		return x - x
	}
	k, r := reduceHalfPi(x)
	tan := func(fast bool) dd {
		s, c := sinQuadrant(0, r, fast), sinQuadrant(1, r, fast)
		if k&1 == 0 {
			return s.div(c)
		}
		return c.div(s).neg()
	}
	if v := tan(true); roundsAlike(v, 4*fastError*math.Abs(v.hi)) {
		return v.hi
	}
	v := tan(false)
	return v.hi + v.lo
}

func (a dd) neg() dd { return dd{-a.hi, -a.lo} }

// sinDD is sin r for |r| <= pi/4 + a little: r + r t S(t), t = r^2.
func sinDD(r dd) dd {
	t := r.mul(r)
	q := series(t, &sinCoefficients)
	return r.add(r.mul(t).mul(q))
}

// cosDD is cos r for |r| <= pi/4 + a little: 1 + t C(t), t = r^2.
func cosDD(r dd) dd {
	t := r.mul(r)
	return dd{1, 0}.add(t.mul(series(t, &cosCoefficients)))
}

// series is c[0] + c[1] t + ... + c[13] t^13 for t <= (pi/4)^2 + a
// little, the terms from t^7 on, below 2^-52 of the sum, in doubles.
func series(t dd, c *[14]dd) dd {
	tail := c[13].hi
	for n := 12; n >= 7; n-- {
		tail = tail*t.hi + c[n].hi
	}
	q := dd{tail, 0}
	for n := 6; n >= 0; n-- {
		q = q.mul(t).add(c[n])
	}
	return q
}

// sinCoefficients are (-1)^n/(2n+1)! for n = 1..14 and cosCoefficients
// (-1)^n/(2n)! for n = 1..14: at |r| = pi/4 the last terms are below
// 2^-102 of the result.
var sinCoefficients, cosCoefficients = func() (s, c [14]dd) {
	f := dd{1, 0}
	for n := 1; n <= 14; n++ {
		f = f.mulFloat(float64(2*n-1) * float64(2*n))
		c[n-1] = dd{1, 0}.div(f)
		s[n-1] = dd{1, 0}.div(f.mulFloat(float64(2*n + 1)))
		if n%2 == 1 {
			c[n-1], s[n-1] = c[n-1].neg(), s[n-1].neg()
		}
	}
	return s, c
}()

// halfPi is pi/2 in five parts: the first three of 32 bits or fewer, so
// that k times each is exact for |k| < 2^21, the last two of 53. Their
// sum is pi/2 to 2^-212 (TestHalfPiParts checks them against math/big).
var halfPi = [5]float64{
	0x1.921fb544p+00,
	0x1.0b4611a6p-34,
	0x1.3198a2ep-69,
	0x1.b839a252049c1p-104,
	0x1.14cf98e804178p-160,
}

// reduceHalfPi is x = k pi/2 + r with |r| about pi/4 or less, r to about
// 105 bits. Below 2^20 it subtracts k pi/2 in halfPi's parts, exact but
// for the last roundings; where that leaves r too small to keep its
// bits, and above 2^20, it works in math/big, slower and always right.
func reduceHalfPi(x float64) (int, dd) {
	if math.Abs(x) <= math.Pi/4 {
		return 0, dd{x, 0}
	}
	if math.Abs(x) < 0x1p20 {
		k := math.RoundToEven(x * (2 / math.Pi))
		// x - k*p0 is exact: both are within a factor of two.
		r := twoSum(x-k*halfPi[0], -k*halfPi[1])
		r = r.add(dd{-k * halfPi[2], 0})
		r = r.add(twoProd(-k, halfPi[3]))
		r = r.add(dd{-k * halfPi[4], 0})
		if math.Abs(r.hi) > 0x1p-30 {
			return int(int64(k) & 3), r
		}
	}
	return reduceHalfPiBig(x)
}

// reduceHalfPiBig is reduceHalfPi in math/big: pi to 1500 bits leaves r
// 200 bits or more for every double, the largest included.
func reduceHalfPiBig(x float64) (int, dd) {
	const prec = 1500
	hp := bigHalfPi()
	X := new(big.Float).SetPrec(prec).SetFloat64(x)
	q := new(big.Float).SetPrec(prec).Quo(X, hp)
	// k = q rounded to the nearest integer
	half := big.NewFloat(0.5)
	if q.Sign() < 0 {
		half.Neg(half)
	}
	q.Add(q, half)
	k, _ := q.Int(nil) // truncates toward zero
	kf := new(big.Float).SetPrec(prec).SetInt(k)
	R := new(big.Float).SetPrec(prec).Mul(kf, hp)
	R.Sub(X, R)
	hi, _ := R.Float64()
	R.Sub(R, new(big.Float).SetFloat64(hi))
	lo, _ := R.Float64()
	quadrant := int(new(big.Int).And(k, big.NewInt(3)).Int64())
	return quadrant, fastTwoSum(hi, lo)
}

var bigHalfPi = sync.OnceValue(func() *big.Float {
	const prec = 1500
	// pi/2 = 8 atan(1/5) - 2 atan(1/239) (Machin)
	a := atanInverse(5, prec)
	b := atanInverse(239, prec)
	a.Mul(a, big.NewFloat(8))
	b.Mul(b, big.NewFloat(2))
	return a.Sub(a, b)
})

// atanInverse is atan(1/n) to prec bits, by its series.
func atanInverse(n int64, prec uint) *big.Float {
	x := new(big.Float).SetPrec(prec).SetInt64(n)
	x.Quo(new(big.Float).SetPrec(prec).SetInt64(1), x)
	x2 := new(big.Float).SetPrec(prec).Mul(x, x)
	sum := new(big.Float).SetPrec(prec).Set(x)
	power := new(big.Float).SetPrec(prec).Set(x)
	term := new(big.Float).SetPrec(prec)
	for k := int64(1); ; k++ {
		power.Mul(power, x2)
		term.Quo(power, new(big.Float).SetInt64(2*k+1))
		if term.MantExp(nil) < -int(prec)-8 {
			return sum
		}
		if k%2 == 1 {
			sum.Sub(sum, term)
		} else {
			sum.Add(sum, term)
		}
	}
}

// Atan, Asin and Acos are C's atan, asin and acos, correctly
// rounded as glibc's are in practice, through atanDD.
func Atan(x float64) float64 {
	if x != x {
		return x + x
	}
	switch ax := math.Abs(x); {
	case ax < 0x1p-27:
		return x // atan x = x - x^3/3 rounds to x
	case ax > 0x1p54:
		return math.Copysign(halfPiDD().hi, x) // pi/2 - 1/x rounds to pi/2
	}
	v := atanDD(dd{math.Abs(x), 0})
	return math.Copysign(v.hi+v.lo, x)
}

func Asin(x float64) float64 {
	ax := math.Abs(x)
	switch {
	case x != x:
		return x + x
	case ax > 1:
		return math.NaN() // libm gives it glibc's sign
	case ax < 0x1p-26:
		return x // asin x = x + x^3/6 rounds to x
	case ax == 1:
		return math.Copysign(halfPiDD().hi, x)
	}
	// asin x = atan(x / sqrt(1 - x^2))
	v := atanDD(dd{ax, 0}.div(sqrtOneMinusSquare(ax)))
	return math.Copysign(v.hi+v.lo, x)
}

func Acos(x float64) float64 {
	ax := math.Abs(x)
	switch {
	case x != x:
		return x + x
	case ax > 1:
		return math.NaN()
	case x == 1:
		return 0
	case x == -1:
		return 2 * halfPiDD().hi
	case ax < 0x1p-56:
		return halfPiDD().hi // pi/2 - x rounds to pi/2
	}
	// acos x = atan(sqrt(1 - x^2) / x), and pi minus that of -x below 0
	v := atanDD(sqrtOneMinusSquare(ax).div(dd{ax, 0}))
	if x < 0 {
		hp := halfPiDD()
		v = dd{2 * hp.hi, 2 * hp.lo}.add(v.neg())
	}
	return v.hi + v.lo
}

// Atan2 is C's atan2(y, x): the angle of (x, y), with C99's values at
// zeros and infinities.
func Atan2(y, x float64) float64 {
	switch {
	case x != x || y != y:
		return x + y
	case math.IsInf(y, 0) || math.IsInf(x, 0):
		return math.Atan2(y, x) // C99's table: multiples of pi/4, or zeros
	case y == 0:
		if math.Signbit(x) {
			return math.Copysign(2*halfPiDD().hi, y)
		}
		return y
	case x == 0:
		return math.Copysign(halfPiDD().hi, y)
	}
	_, ey := math.Frexp(y)
	_, ex := math.Frexp(x)
	var v dd
	switch d := ey - ex; {
	case d < -30:
		// atan(y/x) = y/x (1 - (y/x)^2/3 ...) rounds as y/x does
		if x > 0 {
			return y / x
		}
		hp := halfPiDD()
		v = dd{2 * hp.hi, 2 * hp.lo}.add(dd{-math.Abs(y / x), 0})
		return math.Copysign(v.hi+v.lo, y)
	case d > 56:
		v = halfPiDD()
	default:
		// both scaled by the same power of two: the quotient as a
		// double-double is exact to its last bits, far from underflow
		ay, ax := math.Ldexp(math.Abs(y), -ex), math.Ldexp(math.Abs(x), -ex)
		v = atanDD(dd{ay, 0}.div(dd{ax, 0}))
	}
	if x < 0 {
		hp := halfPiDD()
		v = dd{2 * hp.hi, 2 * hp.lo}.add(v.neg())
	}
	return math.Copysign(v.hi+v.lo, y)
}

// sqrtOneMinusSquare is sqrt(1 - x^2) for 0 <= x < 1: x^2 is exact as a
// double-double, so 1 - x^2 does not lose the bits that matter near 1,
// and one Newton step takes the square root to double-double.
func sqrtOneMinusSquare(x float64) dd {
	a := dd{1, 0}.add(twoProd(x, x).neg())
	s := math.Sqrt(a.hi)
	e := a.add(twoProd(s, s).neg())
	return fastTwoSum(s, (e.hi+e.lo)/(2*s))
}

// atanDD is atan y for y >= 0: pi/2 - atan(1/y) above 1, and below it
// atan(c) + atan((y - c)/(1 + y c)) for c = j/64 nearest y, the second
// by its series, the first from a table.
func atanDD(y dd) dd {
	if y.hi > 1 {
		hp := halfPiDD()
		return hp.add(atanDD(dd{1, 0}.div(y)).neg())
	}
	j := math.RoundToEven(y.hi * 64)
	c := j / 64
	// y - c is exact in its high part: y and c are within a factor of two
	// where c is not 0.
	num := twoSum(y.hi-c, y.lo)
	den := dd{1, 0}.add(y.mulFloat(c))
	u := num.div(den)
	// atan u = u + u t A(t), t = u^2 <= 2^-14: from the fourth term on,
	// below 2^-56 of the sum, in doubles.
	t := u.mul(u)
	tail := 0.0
	for n := 10; n >= 4; n-- {
		tail = tail*t.hi + atanTerm(n)
	}
	q := dd{tail, 0}
	for n := 3; n >= 1; n-- {
		q = q.mul(t).add(atanCoefficients[n-1])
	}
	v := u.add(u.mul(t).mul(q))
	return atanTable()[int(j)].add(v)
}

// atanTerm is (-1)^n/(2n+1) as a double.
func atanTerm(n int) float64 {
	if n%2 == 1 {
		return -1 / float64(2*n+1)
	}
	return 1 / float64(2*n+1)
}

// atanCoefficients are (-1)^n/(2n+1) for n = 1..3 as double-doubles.
var atanCoefficients = [3]dd{
	dd{1, 0}.div(dd{-3, 0}),
	dd{1, 0}.div(dd{5, 0}),
	dd{1, 0}.div(dd{-7, 0}),
}

// halfPiDD is pi/2 as a double-double.
var halfPiDD = sync.OnceValue(func() dd { return bigToDD(bigHalfPi()) })

func bigToDD(v *big.Float) dd {
	hi, _ := v.Float64()
	rest := new(big.Float).SetPrec(v.Prec()).Sub(v, new(big.Float).SetFloat64(hi))
	lo, _ := rest.Float64()
	return dd{hi, lo}
}

// atanTable holds atan(j/64) for j = 0..64 as double-doubles, from
// math/big: the argument halved four times with atan c = 2 atan(c / (1 +
// sqrt(1 + c^2))), then the series.
var atanTable = sync.OnceValue(func() (t [65]dd) {
	const prec = 200
	for j := range t {
		c := new(big.Float).SetPrec(prec).Quo(big.NewFloat(float64(j)), big.NewFloat(64))
		for range 4 {
			s := new(big.Float).SetPrec(prec).Mul(c, c)
			s.Add(s, big.NewFloat(1))
			s.Sqrt(s)
			s.Add(s, big.NewFloat(1))
			c.Quo(c, s)
		}
		c2 := new(big.Float).SetPrec(prec).Mul(c, c)
		sum := new(big.Float).SetPrec(prec).Set(c)
		power := new(big.Float).SetPrec(prec).Set(c)
		term := new(big.Float).SetPrec(prec)
		for k := int64(1); k < 60; k++ {
			power.Mul(power, c2)
			term.Quo(power, new(big.Float).SetInt64(2*k+1))
			if k%2 == 1 {
				sum.Sub(sum, term)
			} else {
				sum.Add(sum, term)
			}
		}
		t[j] = bigToDD(sum.Mul(sum, big.NewFloat(16)))
	}
	return t
})

// log10, sinh, cosh and tanh are glibc's, which are not correctly
// rounded (a tenth to a sixth of their results differ from the nearest
// double): they are computed here as glibc computes them, from its exp,
// log and expm1 and with its constants, so that they round as glibc's do.
// Go's math.Expm1 is the same algorithm as glibc's expm1.

// Log10 is glibc's log10: log10(x) = k log10(2) + log(m)/ln(10) for
// x = m 2^k, m in [1, 2), or [0.5, 1) below 1, with log10(2) in a high
// part of 40 bits, whose product with k is exact, and a low part.
func Log10(x float64) float64 {
	switch {
	case x != x || x == math.Inf(1):
		return x + x
	case x == 0:
		return math.Inf(-1)
	case x < 0:
		return math.NaN()
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
