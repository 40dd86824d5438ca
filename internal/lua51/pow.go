package lua51

import (
	"math"
	"math/bits"
)

// pow is C's pow as Lua 5.1 calls it for ^ and math.pow: the special
// cases of C99's Annex F, and otherwise the correctly rounded power, which
// glibc's pow gives in practice (its bound is 0.52 units in the last
// place). Go's math.Pow is off by one unit in the last place for most
// arguments (2^2.5, 1.1^100). The general case works in double-double
// arithmetic, about 100 bits: x^y = exp(y log x), with log x from the
// atanh series and exp from a Taylor series and squarings, so that the
// one rounding at the end is the only one that counts. A NaN made here is
// made as C makes it, 0/0 at run time, so that it has the sign the
// processor gives one (set, on x86-64, where lua5.1 prints -nan).
func pow(x, y float64) float64 {
	switch {
	case y == 0 || x == 1:
		return 1
	case x != x && y == y:
		// glibc squares a NaN x, and negates the square for an odd
		// integer y: (-nan)^3 is nan
		if isOddInteger(y) {
			return math.Float64frombits((math.Float64bits(x) | quietBit) &^ (1 << 63))
		}
		return x + y
	case y != y:
		return x + y
	case y == 1:
		return x
	case y == 2:
		return x * x
	case y == -1:
		return 1 / x
	}
	if x == 0 {
		odd := isOddInteger(y)
		switch {
		case y < 0 && odd:
			return 1 / x
		case y < 0:
			return math.Inf(1)
		case odd:
			return x
		}
		return 0
	}
	if math.IsInf(y, 0) {
		switch ax := math.Abs(x); {
		case ax == 1:
			return 1
		case (ax < 1) == (y > 0):
			return 0
		}
		return math.Inf(1)
	}
	if math.IsInf(x, 0) {
		r := math.Inf(1)
		if y < 0 {
			r = 0
		}
		if x < 0 && isOddInteger(y) {
			r = -r
		}
		return r
	}
	negate := false
	if x < 0 {
		if y != math.Trunc(y) {
			zero := x - x
			return zero / zero
		}
		negate = isOddInteger(y)
		x = -x
	}
	var r float64
	switch {
	case y == 0.5:
		r = math.Sqrt(x)
	default:
		var ok bool
		if r, ok = exactPower(x, y); !ok {
			if r, ok = integerPower(x, y); !ok {
				r = powPositive(x, y)
			}
		}
	}
	if negate {
		return -r
	}
	return r
}

func isOddInteger(y float64) bool {
	return y == math.Trunc(y) && math.Abs(y) < 1<<53 && int64(y)&1 == 1
}

// exactPower is x^y for an integer y where the power can be had exactly:
// a power of two, or a positive power whose significand fits in 64 bits,
// rounded once, ties to even. The general way cannot break such a tie
// (195^7 lies halfway between two doubles).
func exactPower(x, y float64) (float64, bool) {
	if y != math.Trunc(y) || math.Abs(y) > 1<<20 {
		return 0, false
	}
	frac, exp := math.Frexp(x)
	m := uint64(frac * (1 << 53))
	e := exp - 53
	tz := bits.TrailingZeros64(m)
	m >>= tz
	e += tz
	n := int(y)
	if m == 1 {
		return math.Ldexp(1, e*n), true
	}
	if n < 0 || n > 64 {
		return 0, false
	}
	p := uint64(1)
	for range n {
		hi, lo := bits.Mul64(p, m)
		if hi != 0 {
			return 0, false
		}
		p = lo
	}
	r := float64(p)
	// Scaling is exact unless the result is subnormal, where it would
	// round a second time.
	if _, re := math.Frexp(r); re+e*n < -1021 {
		return 0, false
	}
	return math.Ldexp(r, e*n), true
}

// integerPower is x^y for an integer |y| <= 64 by repeated squaring in
// double-double, a few products where the general way takes many; ok is
// false where a partial product could leave the range of normal numbers.
func integerPower(x, y float64) (float64, bool) {
	if y != math.Trunc(y) || math.Abs(y) > 64 {
		return 0, false
	}
	n := int(math.Abs(y))
	// Every partial product stays far from overflow and from the
	// subnormals, where a double-double's low half loses its bits.
	if _, e := math.Frexp(x); e*n > 900 || e*n < -900 {
		return 0, false
	}
	r, b := dd{1, 0}, dd{x, 0}
	for {
		if n&1 == 1 {
			r = r.mul(b)
		}
		n >>= 1
		if n == 0 {
			break
		}
		b = b.mul(b)
	}
	if y < 0 {
		r = dd{1, 0}.div(r)
	}
	return r.hi + r.lo, true
}

// dd is a double-double: hi + lo, |lo| at most half a unit of hi's last
// place.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func fastTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (a dd) add(b dd) dd {
	s := twoSum(a.hi, b.hi)
	t := twoSum(a.lo, b.lo)
	s = fastTwoSum(s.hi, s.lo+t.hi)
	return fastTwoSum(s.hi, s.lo+t.lo)
}

func (a dd) mul(b dd) dd {
	p := twoProd(a.hi, b.hi)
	return fastTwoSum(p.hi, p.lo+(a.hi*b.lo+a.lo*b.hi))
}

func (a dd) mulFloat(b float64) dd {
	p := twoProd(a.hi, b)
	return fastTwoSum(p.hi, p.lo+a.lo*b)
}

func (a dd) div(b dd) dd {
	q := a.hi / b.hi
	r := a.add(b.mulFloat(-q))
	return fastTwoSum(q, r.hi/b.hi)
}

// ln2 to about 107 bits.
var ln2 = dd{0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56}

// atanhCoefficients are 1/(2k+1) for k = 1..5 as double-doubles: the
// leading terms of log's series, which must be exact to the last bits;
// the rest are summed in plain doubles.
var atanhCoefficients = func() (c [5]dd) {
	for k := range c {
		c[k] = dd{1, 0}.div(dd{float64(2*k + 3), 0})
	}
	return c
}()

// atanhTail are 1/(2k+1) for k = 24 down to 6.
var atanhTail = func() (c [19]float64) {
	for i := range c {
		c[i] = 1 / float64(2*(24-i)+1)
	}
	return c
}()

// expCoefficients are 1/n! for n = 2..9, for expm1's series.
var expCoefficients = func() (c [8]dd) {
	f := 1.0
	for n := range c {
		f *= float64(n + 2)
		c[n] = dd{1, 0}.div(dd{f, 0})
	}
	return c
}()

// logDD is log(x) for a finite x > 0 to about 100 bits.
func logDD(x float64) dd {
	m, e := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}
	// log m = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.172; m-1 is exact.
	s := dd{m - 1, 0}.div(twoSum(m, 1))
	t := s.mul(s)
	// The series in t past 1/11, in doubles: t^5 is below 2^-25, so their
	// rounding is far below 2^-100 of the whole.
	tail := 0.0
	for _, c := range atanhTail {
		tail = tail*t.hi + c
	}
	q := dd{tail, 0}
	for k := len(atanhCoefficients) - 1; k >= 0; k-- {
		q = q.mul(t).add(atanhCoefficients[k])
	}
	// log m = 2s + 2s*t*q
	s2 := dd{2 * s.hi, 2 * s.lo}
	logm := s2.add(s2.mul(t).mul(q))
	fe := float64(e)
	eln2 := twoProd(fe, ln2.hi)
	eln2 = fastTwoSum(eln2.hi, eln2.lo+fe*ln2.lo)
	return eln2.add(logm)
}

// powPositive is x^y for a finite x > 0 and a finite y that are not a
// special case.
func powPositive(x, y float64) float64 {
	lx := logDD(x)
	// Past these bounds the result overflows or underflows whatever the
	// low bits, and the product's own rounding error may be infinite.
	switch zh := lx.hi * y; {
	case zh > 710:
		return math.Inf(1)
	case zh < -746:
		return 0
	}
	return expDD(lx.mulFloat(y))
}

// expm1Small is exp(r) - 1 for |r| <= log(2)/512: r + r^2/2 in
// double-double, the rest, below 2^-30 of the whole, in doubles.
func expm1Small(r dd) dd {
	r2 := r.mul(r)
	tail := r.hi * r2.hi * (1.0/6 + r.hi*(1.0/24+r.hi*(1.0/120+r.hi*(1.0/720+r.hi*(1.0/5040)))))
	return r.add(dd{r2.hi / 2, r2.lo / 2}).add(dd{tail, 0})
}

// exp2Table holds 2^(j/256) for j = 0..255 as double-doubles, computed
// once the slow way.
var exp2Table = func() (t [256]dd) {
	for j := range t {
		t[j] = expSlow(dd{ln2.hi / 256, ln2.lo / 256}.mulFloat(float64(j)))
	}
	return t
}()

// expSlow is exp(r) for |r| <= log(2) to about 100 bits:
// (exp(r/256))^256, kept as expm1 so that nothing cancels.
func expSlow(r dd) dd {
	r = dd{math.Ldexp(r.hi, -8), math.Ldexp(r.lo, -8)}
	q := expCoefficients[len(expCoefficients)-1]
	for n := len(expCoefficients) - 2; n >= 0; n-- {
		q = q.mul(r).add(expCoefficients[n])
	}
	em1 := r.add(r.mul(r).mul(q))
	for range 8 {
		// e^2a - 1 = (e^a - 1)(e^a - 1 + 2)
		em1 = em1.mul(em1.add(dd{2, 0}))
	}
	return em1.add(dd{1, 0})
}

// scale rounds v * 2^k to the nearest double, once, subnormals included.
func scale(v dd, k int) float64 {
	if k > -1021 {
		return math.Ldexp(v.hi+v.lo, k)
	}
	// The result is subnormal or nearly so: round v * 2^(k+1074) to an
	// integer, ties to even, then scale that, exactly, by 2^-1074.
	hi, lo := math.Ldexp(v.hi, k+1074), math.Ldexp(v.lo, k+1074)
	n := math.RoundToEven(hi)
	switch d := (hi - n) + lo; {
	case d > 0.5 || d == 0.5 && math.Mod(n, 2) != 0:
		n++
	case d < -0.5 || d == -0.5 && math.Mod(n, 2) != 0:
		n--
	}
	return math.Ldexp(n, -1074)
}
