package lua51

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// mathMod is Lua 5.1's math.fmod and math.mod, its old name: C's fmod,
// the remainder of x / y with the sign of x. gopher-lua's math.mod is the
// % operator, with the sign of y, so math.mod(-7, 3) is 2 there and -1 in
// Lua 5.1; its math.fmod is Go's math.Mod, whose NaN is positive where
// C's is the processor's (fmod(-inf, 3) prints -nan).
func mathMod(L *lua.LState) int {
	x, y := twoNumbers(L)
	L.Push(lua.LNumber(fmod(float64(x), float64(y))))
	return 1
}

// fmod is glibc's fmod: a NaN operand comes back as it is, and an infinite
// x or a zero y gives the processor's default NaN, whose sign bit is set
// on x86-64, as 0/0 computed at run time is.
func fmod(x, y float64) float64 {
	if math.IsNaN(x) || math.IsNaN(y) {
		return x + y
	}
	if math.IsInf(x, 0) || y == 0 {
		return math.Float64frombits(defaultNaNBits)
	}
	return math.Mod(x, y)
}

// defaultNaNBits is x86-64's default NaN, what an invalid operation gives.
const defaultNaNBits = 0xfff8000000000000

// gopherHuge is gopher-lua's math.huge, the largest finite number, where
// Lua 5.1's is HUGE_VAL, infinity: 1/0 == math.huge is false there, and
// math.huge prints as 1.7976931348623157e+308.
const gopherHuge = lua.LNumber(math.MaxFloat64)

var huge = lua.LNumber(math.Inf(1))

// mathPow is math.pow, C's pow as the ^ operator computes it (pow.go);
// gopher-lua's is Go's math.Pow.
func mathPow(L *lua.LState) int {
	x, y := twoNumbers(L)
	L.Push(lua.LNumber(pow(float64(x), float64(y))))
	return 1
}

// twoNumbers reads the arguments x and y of one of Lua 5.1's math
// functions of two numbers, which pass luaL_checknumber(L, 1) and
// luaL_checknumber(L, 2) straight to C, where gcc evaluates the second
// first: math.pow("x", nil) complains of argument #2.
func twoNumbers(L *lua.LState) (x, y lua.LNumber) {
	y = checkNumber(L, 2)
	return checkNumber(L, 1), y
}

// A NaN from glibc's math functions: a NaN argument comes back, quieted,
// with its sign; a NaN made from numbers (sin of an infinity, log of a
// negative number) has the sign each function gives it, which differs
// from function to function. Go's functions give their one positive NaN
// for all of these, so math.sin(1/0) printed nan where lua5.1 prints -nan.
const (
	positiveNaN = false
	negativeNaN = true
)

// libm is one of Lua 5.1's math functions of one number, with glibc's NaN.
type libm struct {
	fn       func(float64) float64
	negative bool // the sign of a NaN made from a number
}

func (m libm) call(L *lua.LState) int {
	x := float64(checkNumber(L, 1))
	r := m.fn(x)
	if r != r {
		r = madeNaN(m.negative, x)
	}
	L.Push(lua.LNumber(r))
	return 1
}

// The functions with glibc's NaN, each with the sign lua5.1 on x86-64
// prints for a NaN it makes from a number: math.sin(1/0) and
// math.log(-1) are -nan, math.log10(-1) and math.asin(2) nan.
var (
	mathSin   = libm{Sin, negativeNaN}.call
	mathCos   = libm{Cos, negativeNaN}.call
	mathTan   = libm{Tan, negativeNaN}.call
	mathLog   = libm{Log, negativeNaN}.call
	mathExp   = libm{Exp, positiveNaN}.call
	mathLog10 = libm{Log10, positiveNaN}.call
	mathCosh  = libm{Cosh, positiveNaN}.call
	mathSinh  = libm{Sinh, positiveNaN}.call
	mathTanh  = libm{Tanh, positiveNaN}.call
	mathAtan  = libm{Atan, positiveNaN}.call
	mathAcos  = libm{Acos, positiveNaN}.call
	mathAsin  = libm{Asin, positiveNaN}.call
)

// madeNaN is glibc's NaN result: the first NaN among args, quieted, else
// the default NaN with the sign given.
func madeNaN(negative bool, args ...float64) float64 {
	for _, a := range args {
		if a != a {
			return math.Float64frombits(math.Float64bits(a) | quietBit)
		}
	}
	if negative {
		return math.Float64frombits(defaultNaNBits)
	}
	return math.Float64frombits(defaultNaNBits &^ (1 << 63))
}

// quietBit is the top bit of a float64's significand, set in a quiet NaN.
const quietBit = 1 << 51

// mathAtan2 is Lua 5.1's math.atan2(y, x): glibc gives x's NaN where x is
// one, else y's.
func mathAtan2(L *lua.LState) int {
	y, x := twoNumbers(L)
	r := Atan2(float64(y), float64(x))
	if r != r {
		r = madeNaN(positiveNaN, float64(x), float64(y))
	}
	L.Push(lua.LNumber(r))
	return 1
}

// radiansPerDegree is lmathlib.c's PI/180.0, rounded as C rounds it: pi
// as a double, divided in double. math.rad multiplies by it and math.deg
// divides by it, so neither overflows where the result is finite
// (gopher-lua's x*pi/180 made math.rad(1e308) infinite).
var radiansPerDegree = func() float64 {
	pi := math.Pi
	return pi / 180
}()

func mathRad(L *lua.LState) int {
	L.Push(lua.LNumber(float64(checkNumber(L, 1)) * radiansPerDegree))
	return 1
}

func mathDeg(L *lua.LState) int {
	L.Push(lua.LNumber(float64(checkNumber(L, 1)) / radiansPerDegree))
	return 1
}

// mathModf is Lua 5.1's math.modf, C's modf: the fraction of an infinity
// is a zero of its sign (Go's math.Modf gives NaN).
func mathModf(L *lua.LState) int {
	x := float64(checkNumber(L, 1))
	ip, fp := math.Modf(x)
	if math.IsInf(x, 0) {
		fp = math.Copysign(0, x)
	}
	L.Push(lua.LNumber(ip))
	L.Push(lua.LNumber(fp))
	return 2
}

// mathMax and mathMin are lmathlib.c's: the first argument is required
// (math.max() is "bad argument #1 ... (number expected, got no value)",
// where gopher-lua said "wrong number of arguments"), and each later one
// replaces the result only where it compares greater (or less), so a NaN
// first stays and a NaN later is passed over, as in C.
func mathMax(L *lua.LState) int { return extreme(L, func(d, m float64) bool { return d > m }) }

func mathMin(L *lua.LState) int { return extreme(L, func(d, m float64) bool { return d < m }) }

func extreme(L *lua.LState, better func(d, m float64) bool) int {
	m := float64(checkNumber(L, 1))
	for i := 2; i <= L.GetTop(); i++ {
		if d := float64(checkNumber(L, i)); better(d, m) {
			m = d
		}
	}
	L.Push(lua.LNumber(m))
	return 1
}
