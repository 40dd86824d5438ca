package lua51

import (
	"math"
	"math/bits"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// baseTonumber is Lua 5.1's tonumber(e [, base]). gopher-lua's takes a
// string with an exponent only if it also has a point ("1e2" gives nil),
// trims only spaces, tabs and newlines, and hands the rest to Go's
// parsers, which accept what C's do not and the reverse. This one reads
// strings as Lua 5.1 does, through strtod for base 10 and strtoul for the
// others.
func baseTonumber(L *lua.LState) int {
	base := optInt(L, 2, 10)
	if base == 10 {
		switch v := L.CheckAny(1).(type) {
		case lua.LNumber:
			L.Push(v)
		case lua.LString:
			if n, ok := str2d(string(v)); ok {
				L.Push(lua.LNumber(n))
			} else {
				L.Push(lua.LNil)
			}
		default:
			L.Push(lua.LNil)
		}
		return 1
	}
	s := checkString(L, 1)
	if base < 2 || base > 36 {
		L.ArgError(2, "base out of range")
	}
	if n, ok := strtoul(s, base); ok {
		L.Push(lua.LNumber(n))
	} else {
		L.Push(lua.LNil)
	}
	return 1
}

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

// cString is s as C sees it: up to its first NUL.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// onlySpaceFrom says whether s holds nothing but white space from i on.
func onlySpaceFrom(s string, i int) bool {
	for ; i < len(s); i++ {
		if !isSpace(s[i]) {
			return false
		}
	}
	return true
}

// str2d is luaO_str2d: the whole of s (up to a NUL) must be a number as
// glibc's strtod reads one, with white space around it; a hexadecimal one
// is read as an integer when strtod would stop at its "x".
func str2d(s string) (float64, bool) {
	s = cString(s)
	f, end := strtod(s)
	if end == 0 {
		return 0, false
	}
	if end < len(s) && (s[end] == 'x' || s[end] == 'X') {
		n, ok := strtoul(s, 16)
		return n, ok
	}
	return f, onlySpaceFrom(s, end)
}

// strtod reads the longest prefix of s that glibc's strtod would: white
// space, a sign, then a decimal or hexadecimal number, "inf", "infinity"
// or "nan" (with an optional parenthesised tail). end is 0 when there is
// no number.
func strtod(s string) (f float64, end int) {
	i, neg := skipSpaceAndSign(s)
	signed := func(f float64) float64 {
		if neg {
			return -f
		}
		return f
	}
	rest := strings.ToLower(s[i:min(len(s), i+8)])
	switch {
	case strings.HasPrefix(rest, "infinity"):
		return signed(math.Inf(1)), i + 8
	case strings.HasPrefix(rest, "inf"):
		return signed(math.Inf(1)), i + 3
	case strings.HasPrefix(rest, "nan"):
		j := i + 3
		if j < len(s) && s[j] == '(' {
			k := j + 1
			for k < len(s) && (isAlnum(s[k]) || s[k] == '_') {
				k++
			}
			if k < len(s) && s[k] == ')' {
				j = k + 1
			}
		}
		return signed(math.NaN()), j
	}
	hex := i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X')
	digits := isDigit
	if hex {
		digits = isHexDigit
		i += 2
	}
	mantissa := i
	n := 0
	for i < len(s) && digits(s[i]) {
		i, n = i+1, n+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && digits(s[i]) {
			i, n = i+1, n+1
		}
	}
	if n == 0 {
		if hex {
			// "0x" with no digits: strtod reads the 0 and stops at the x.
			return 0, mantissa - 1
		}
		return 0, 0
	}
	body := s[mantissa:i]
	mark := byte('e')
	if hex {
		mark = 'p'
	}
	exp := ""
	if i < len(s) && (s[i]|0x20) == mark {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k > j {
			exp, i = s[i+1:k], k
		}
	}
	// The text is checked above, so Go's parser sees only what it reads as
	// C does; past the largest number it returns an infinity, as strtod.
	text := body
	if hex {
		if exp == "" {
			exp = "0"
		}
		text = "0x" + body + "p" + exp
	} else if exp != "" {
		text = body + "e" + exp
	}
	f, _ = strconv.ParseFloat(text, 64)
	return signed(f), i
}

// strtoul is C's strtoul(s, base) followed by luaB_tonumber's check that
// only white space follows: the value, wrapped as an unsigned long is
// when negated and ULONG_MAX past it, as a float.
func strtoul(s string, base int) (float64, bool) {
	s = cString(s)
	i, neg := skipSpaceAndSign(s)
	if base == 16 && i+2 < len(s) && s[i] == '0' && (s[i+1]|0x20) == 'x' && digitValue(s[i+2]) < 16 {
		i += 2
	}
	var n uint64
	overflow := false
	start := i
	for ; i < len(s); i++ {
		d := digitValue(s[i])
		if d >= base {
			break
		}
		hi, lo := bits.Mul64(n, uint64(base))
		lo, carry := bits.Add64(lo, uint64(d), 0)
		overflow = overflow || hi != 0 || carry != 0
		n = lo
	}
	if i == start || !onlySpaceFrom(s, i) {
		return 0, false
	}
	switch {
	case overflow:
		n = math.MaxUint64
	case neg:
		n = -n
	}
	return float64(n), true
}

func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isHexDigit(c byte) bool { return digitValue(c) < 16 }
func isAlnum(c byte) bool    { return digitValue(c) < 36 }

// skipSpaceAndSign is where the digits of s begin after the white space
// and the sign that strtod and strtoul both allow, and whether the sign
// was a minus.
func skipSpaceAndSign(s string) (i int, neg bool) {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	return i, neg
}
