package lua51

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// mathMod is Lua 5.1's math.mod, the old name of math.fmod: the remainder
// of x / y with the sign of x. gopher-lua's math.mod is the % operator,
// with the sign of y, so math.mod(-7, 3) is 2 there and -1 in Lua 5.1.
func mathMod(L *lua.LState) int {
	x, y := L.CheckNumber(1), L.CheckNumber(2)
	L.Push(lua.LNumber(math.Mod(float64(x), float64(y))))
	return 1
}

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
