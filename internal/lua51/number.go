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

// Lua 5.1's library reads an integer argument in one of two widths, as its
// auxiliary library converts numbers on x86-64 (lauxlib.c, luaconf.h):
// luaL_checkinteger casts the number to the 64-bit lua_Integer (toInt64),
// and luaL_checkint casts that on to C's int, which keeps its low 32 bits.
// So string.rep("ab", 2^32 + 2) is "abab" in Lua 5.1, string.sub("abc",
// 2^32) is "", and a count of 2^53 or NaN is 0 (CInt). Each function below
// reads its arguments in the width its Lua 5.1 counterpart does; unlike
// gopher-lua's CheckInt, each takes a string holding a number.

// checkInteger is luaL_checkinteger.
func checkInteger(L *lua.LState, n int) int64 {
	return toInt64(float64(checkNumber(L, n)))
}

// optInteger is luaL_optinteger: def when argument n is absent or nil.
func optInteger(L *lua.LState, n int, def int64) int64 {
	if L.Get(n) == lua.LNil {
		return def
	}
	return checkInteger(L, n)
}

// checkInt is luaL_checkint.
func checkInt(L *lua.LState, n int) int {
	return CInt(float64(checkNumber(L, n)))
}

// optInt is luaL_optint: def when argument n is absent or nil.
func optInt(L *lua.LState, n, def int) int {
	if L.Get(n) == lua.LNil {
		return def
	}
	return checkInt(L, n)
}

// CInt is the int Lua 5.1's luaL_checkint makes of f: f cast to a 64-bit
// integer, then to C's 32-bit int.
func CInt(f float64) int {
	return int(int32(toInt64(f)))
}

// stringParams is, for each function of the string library, how many of
// its first parameters are strings. gopher-lua's CheckString turns a number
// given for one into text in Go's shortest form ("+Inf",
// "0.3333333333333333"), so string.len(1/0) was 4 where Lua 5.1, which
// converts it with "%.14g", says 3 ("inf").
var stringParams = map[string]int{
	"string.byte": 1, "string.find": 2, "string.format": 1, "string.gmatch": 2, "string.gsub": 2,
	"string.len": 1, "string.lower": 1, "string.match": 2, "string.rep": 1,
	"string.reverse": 1, "string.sub": 1, "string.upper": 1,
}

// textArgs calls fn with its first n arguments that are numbers turned into
// strings as Lua 5.1 turns them ("%.14g"), as luaL_checklstring converts
// them in place.
type textArgs struct {
	fn lua.LGFunction
	n  int
}

func (t textArgs) call(L *lua.LState) int {
	for i := 1; i <= t.n; i++ {
		if v, ok := L.Get(i).(lua.LNumber); ok {
			L.Replace(i, lua.LString(numberString(v)))
		}
	}
	return t.fn(L)
}

// CheckString is luaL_checkstring: argument n as a string, a number turned
// into one as Lua 5.1 turns it ("%.14g"), where gopher-lua's L.CheckString
// uses Go's shortest form.
func CheckString(L *lua.LState, n int) string { return checkString(L, n) }

// OptString is luaL_optstring: CheckString, or def where argument n is
// absent or nil.
func OptString(L *lua.LState, n int, def string) string {
	if L.Get(n) == lua.LNil {
		return def
	}
	return checkString(L, n)
}
