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
	if v, special := logSpecial(x); special {
		return v
	}
	r := logDD(x)
	return r.hi + r.lo
}

// logSpecial is log's and log10's answer where x is not a finite positive
// number: NaN and +inf as they are, -inf at a zero, NaN below (libm gives
// that NaN glibc's sign).
func logSpecial(x float64) (float64, bool) {
	switch {
	case x != x || x == math.Inf(1):
		return x + x, true
	case x == 0:
		return math.Inf(-1), true
	case x < 0:
		return math.NaN(), true
	}
	return 0, false
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
