package lua51

import (
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The functions here are Lua 5.1's where gopher-lua's read an integer
// argument as a Go int made from the float, instead of in the width Lua
// 5.1 reads it (checkInteger, checkInt; see number.go). Beyond C's int,
// gopher-lua's answers parted from Lua 5.1's, and some ran away:
// string.rep("ab", 2^32 + 2), "abab" in Lua 5.1, built 8 GiB, and
// table.insert(t, 2^53, v) never returned.

// strSub is Lua 5.1's string.sub(s, i [, j]), whose positions are 64-bit
// integers: gopher-lua's reads them as Go ints from the float, so a start
// of 2^63, NaN or an infinity, which Lua 5.1 reads as the lowest integer
// and so as the string's start, gave "" there.
func strSub(L *lua.LState) int {
	s := checkString(L, 1)
	i := max(posrelat(checkInteger(L, 2), len(s)), 1)
	j := min(posrelat(optInteger(L, 3, -1), len(s)), int64(len(s)))
	if i > j {
		L.Push(lua.LString(""))
	} else {
		L.Push(lua.LString(s[i-1 : j]))
	}
	return 1
}

// posrelat is lstrlib.c's: a negative position counts back from the end
// of a string of length l; what is still negative is 0.
func posrelat(pos int64, l int) int64 {
	if pos < 0 {
		pos += int64(l) + 1
	}
	return max(pos, 0)
}

// strRep is Lua 5.1's string.rep(s, n), n a C int.
func strRep(L *lua.LState) int {
	s := checkString(L, 1)
	n := checkInt(L, 2)
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	grow(L, len(s)*n)
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// baseSelect is Lua 5.1's select(n, ...): a string starting with "#"
// counts the values, anything else is read as a C int (so a numeric
// string serves, where gopher-lua's wants exactly "#" or a number).
func baseSelect(L *lua.LState) int {
	n := L.GetTop()
	if s, ok := L.Get(1).(lua.LString); ok && strings.HasPrefix(string(s), "#") {
		L.Push(lua.LNumber(n - 1))
		return 1
	}
	i := checkInt(L, 1)
	if i < 0 {
		i += n
	} else if i > n {
		i = n
	}
	if i < 1 {
		argError(L, 1, "select", "index out of range")
	}
	return n - i
}

// baseUnpack is Lua 5.1's unpack(t [, i [, j]]), i and j C ints: a range
// whose count overflows a C int is "too many results to unpack" there.
func baseUnpack(L *lua.LState) int {
	t := L.CheckTable(1)
	i := optInt(L, 2, 1)
	e := optInt(L, 3, length(t))
	if i > e {
		return 0
	}
	if int32(e-i+1) <= 0 {
		raise(L, "too many results to unpack")
	}
	for k := i; k <= e; k++ {
		L.Push(getInt(t, k))
	}
	return e - i + 1
}

// ipairs is Lua 5.1's ipairs, whose iterator reads its control variable
// as a C int, so ipairs(t)'s function called with 2^53 starts at 1.
type ipairs struct{ aux lua.LValue }

func newIpairs(L *lua.LState) ipairs { return ipairs{L.NewFunction(ipairsAux)} }

func (p ipairs) call(L *lua.LState) int {
	t := L.CheckTable(1)
	L.Push(p.aux)
	L.Push(t)
	L.Push(lua.LNumber(0))
	return 3
}

func ipairsAux(L *lua.LState) int {
	i := checkInt(L, 2)
	t := L.CheckTable(1)
	i++
	v := getInt(t, i)
	if v == lua.LNil {
		return 0
	}
	L.Push(lua.LNumber(i))
	L.Push(v)
	return 2
}

// mathLdexp is Lua 5.1's math.ldexp(m, e), e a C int.
func mathLdexp(L *lua.LState) int {
	e := checkInt(L, 2) // the second first, as gcc evaluates C's arguments
	L.Push(lua.LNumber(math.Ldexp(float64(checkNumber(L, 1)), e)))
	return 1
}
