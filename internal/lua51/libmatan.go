package lua51

import (
	"math"
	"math/big"
	"sync"
)

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
