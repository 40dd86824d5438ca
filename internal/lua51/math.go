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
	x, y := L.CheckNumber(1), L.CheckNumber(2)
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
	x, y := L.CheckNumber(1), L.CheckNumber(2)
	L.Push(lua.LNumber(pow(float64(x), float64(y))))
	return 1
}

// Acos is C's acos to within 2 ulps. Go's math.Acos goes through
// sqrt(1 - x*x), which cancels near ±1: acos(0.99999999) comes out
// 3e-10 too large (25 million ulps), where lua5.1 gives the right
// number. 1 - x and 1 + x are exact where they matter.
func Acos(x float64) float64 { return 2 * math.Atan2(math.Sqrt(1-x), math.Sqrt(1+x)) }

// Asin is C's asin to within 2 ulps; Go's math.Asin loses about ten bits
// near ±1, for the reason Acos gives.
func Asin(x float64) float64 { return math.Atan2(x, math.Sqrt((1-x)*(1+x))) }

func mathAcos(L *lua.LState) int {
	L.Push(lua.LNumber(Acos(float64(L.CheckNumber(1)))))
	return 1
}

func mathAsin(L *lua.LState) int {
	L.Push(lua.LNumber(Asin(float64(L.CheckNumber(1)))))
	return 1
}
