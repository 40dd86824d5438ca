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
