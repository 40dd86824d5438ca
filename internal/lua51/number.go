package lua51

import (
	"math"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// numberString is a number as Lua 5.1 turns it into a string, printf's
// "%.14g" (LUAI_NUMFFORMAT). gopher-lua's LNumber.String prints integers
// in full and other numbers in Go's shortest form instead: 1e+15 is
// "1000000000000000" there, 1/3 "0.3333333333333333", 1/0 "+Inf".
func numberString(n lua.LNumber) string {
	f := float64(n)
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		// glibc prints the sign of a NaN, and 0/0 on x86 has it set.
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', 14, 64)
}

// optInt is luaL_optint: argument n as an integer, truncated toward zero,
// def when it is absent or nil. Unlike gopher-lua's OptInt it takes a
// string holding a number, as Lua 5.1 does.
func optInt(L *lua.LState, n, def int) int {
	if L.Get(n) == lua.LNil {
		return def
	}
	return int(toInt64(float64(checkNumber(L, n))))
}
