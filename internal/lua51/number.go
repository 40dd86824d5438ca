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
