package lua51

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// strFormat is Lua 5.1's string.format(fmt, ...), which hands each item to
// C's sprintf. gopher-lua's hands the whole format to Go's fmt.Sprintf
// instead, which prints "%!s(MISSING)" for a missing argument and
// "%!z(int64=1)" for an unknown option where Lua raises an error, quotes
// %q the Go way ("\x00", "\n") that Lua 5.1 cannot read back, prints %g
// with as many digits as it takes, negative numbers under %x with a minus
// sign, infinity as "+Inf", and takes any value for %s and no numeric
// string for %f.
func strFormat(L *lua.LState) int {
	format := L.CheckString(1)
	top := L.GetTop()
	arg := 1
	var b strings.Builder
	for i := 0; i < len(format); {
		c := format[i]
		i++
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i < len(format) && format[i] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		arg++
		if arg > top {
			L.ArgError(arg, "no value")
		}
		spec, verb, next := scanFormat(L, format, i)
		i = next
		switch verb {
		case 'c':
			item := spec.pad(string([]byte{byte(toInt32(float64(checkNumber(L, arg))))}))
			b.WriteString(cString(item))
		case 'd', 'i':
			b.WriteString(spec.signed(toInt64(float64(checkNumber(L, arg)))))
		case 'o', 'u', 'x', 'X':
			b.WriteString(spec.unsigned(verb, toUnsigned(float64(checkNumber(L, arg)))))
		case 'e', 'E', 'f', 'g', 'G':
			b.WriteString(spec.float(verb, float64(checkNumber(L, arg))))
		case 'q':
			quote(&b, checkString(L, arg))
		case 's':
			s := checkString(L, arg)
			if !spec.hasPrecision && len(s) >= 100 {
				// sprintf's buffer is too small for it: Lua 5.1 adds the
				// string as it is, width and all ignored.
				b.WriteString(s)
				continue
			}
			s = cString(s)
			if spec.hasPrecision && spec.precision < len(s) {
				s = s[:spec.precision]
			}
			b.WriteString(spec.pad(s))
		case 0:
			// The format ended after the spec; Lua 5.1's message names the
			// terminating NUL, which lua_pushfstring drops.
			raise(L, "invalid option '%' to 'format'")
		default:
			raise(L, fmt.Sprintf("invalid option '%%%c' to 'format'", verb))
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// formatSpec is what lies between a '%' and its conversion.
type formatSpec struct {
	flags                  string
	width, precision       int
	hasWidth, hasPrecision bool
}

// scanFormat reads a spec as lstrlib.c's scanformat does: flags from
// "-+ #0" (at most five), then a width and a precision of two digits at
// most. It returns the spec, the conversion character (0 at the end of
// the format) and where the format goes on.
func scanFormat(L *lua.LState, format string, i int) (formatSpec, byte, int) {
	var spec formatSpec
	start := i
	for i < len(format) && strings.IndexByte("-+ #0", format[i]) >= 0 {
		i++
	}
	if i-start > 5 {
		raise(L, "invalid format (repeated flags)")
	}
	spec.flags = format[start:i]
	digits := func(n *int, has *bool) {
		for k := 0; k < 2 && i < len(format) && isDigit(format[i]); k++ {
			*n = *n*10 + int(format[i]-'0')
			*has = true
			i++
		}
	}
	digits(&spec.width, &spec.hasWidth)
	if i < len(format) && format[i] == '.' {
		i++
		spec.hasPrecision = true
		var ignored bool
		digits(&spec.precision, &ignored)
	}
	if i < len(format) && isDigit(format[i]) {
		raise(L, "invalid format (width or precision too long)")
	}
	if i == len(format) {
		return spec, 0, i
	}
	return spec, format[i], i + 1
}

func (s formatSpec) has(flag byte) bool { return strings.IndexByte(s.flags, flag) >= 0 }

// goFormat is the spec as a Go format with the given flags and verb; Go's
// fmt reads flags, widths and precisions as C's printf does for the
// floating-point conversions it is used for here.
func (s formatSpec) goFormat(flags string, verb byte) string {
	f := "%" + flags
	if s.hasWidth {
		f += fmt.Sprint(s.width)
	}
	if s.hasPrecision {
		f += "." + fmt.Sprint(s.precision)
	}
	return f + string(verb)
}

// signed formats %d and %i.
func (s formatSpec) signed(v int64) string {
	var digits string
	if v < 0 {
		digits = strconv.FormatUint(-uint64(v), 10)
	} else {
		digits = strconv.FormatUint(uint64(v), 10)
	}
	return s.integer(sign(s.flags, v < 0), digits, v == 0, false)
}

// unsigned formats %o, %u, %x and %X; C ignores + and space for them.
func (s formatSpec) unsigned(verb byte, v uint64) string {
	var digits, prefix string
	switch verb {
	case 'o':
		digits = strconv.FormatUint(v, 8)
	case 'u':
		digits = strconv.FormatUint(v, 10)
	case 'x':
		digits = strconv.FormatUint(v, 16)
		if s.has('#') && v != 0 {
			prefix = "0x"
		}
	case 'X':
		digits = strings.ToUpper(strconv.FormatUint(v, 16))
		if s.has('#') && v != 0 {
			prefix = "0X"
		}
	}
	return s.integer(prefix, digits, v == 0, verb == 'o' && s.has('#'))
}

// integer lays out an integer as printf does: the digits made up to the
// precision with zeros (none at all for a zero with precision 0; at least
// a leading 0 for %#o), then the sign or prefix, then the width made up
// with spaces, or with zeros after the sign for the 0 flag, which - and a
// precision turn off. Go's fmt counts a 0x prefix outside the width, where
// C counts it in.
func (s formatSpec) integer(prefix, digits string, zero, leadingZero bool) string {
	if s.hasPrecision {
		if zero && s.precision == 0 {
			digits = ""
		}
		if len(digits) < s.precision {
			digits = strings.Repeat("0", s.precision-len(digits)) + digits
		}
	}
	if leadingZero && !strings.HasPrefix(digits, "0") {
		digits = "0" + digits
	}
	if s.has('0') && !s.has('-') && !s.hasPrecision && s.hasWidth {
		if n := s.width - len(prefix) - len(digits); n > 0 {
			digits = strings.Repeat("0", n) + digits
		}
	}
	return s.pad(prefix + digits)
}

// float formats %e, %E, %f, %g and %G. Go prints infinities and NaN its
// own way and %g with the fewest digits; C prints "inf" and "nan" (their
// sign as for any number, padded with spaces) and %g with 6.
func (s formatSpec) float(verb byte, f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		word := "inf"
		if math.IsNaN(f) {
			word = "nan"
		}
		if verb == 'E' || verb == 'G' {
			word = strings.ToUpper(word)
		}
		return s.withoutZero().pad(sign(s.flags, math.Signbit(f)) + word)
	}
	if !s.hasPrecision {
		s.hasPrecision, s.precision = true, 6
	}
	return fmt.Sprintf(s.goFormat(s.flags, verb), f)
}

func (s formatSpec) withoutZero() formatSpec {
	s.flags = strings.ReplaceAll(s.flags, "0", "")
	return s
}

// sign is what C writes before a number's digits.
func sign(flags string, negative bool) string {
	switch {
	case negative:
		return "-"
	case strings.Contains(flags, "+"):
		return "+"
	case strings.Contains(flags, " "):
		return " "
	}
	return ""
}

// pad pads s with spaces to the width, on the left unless the - flag is
// set, counting bytes as C does.
func (s formatSpec) pad(str string) string {
	if !s.hasWidth || len(str) >= s.width {
		return str
	}
	fill := strings.Repeat(" ", s.width-len(str))
	if s.has('-') {
		return str + fill
	}
	return fill + str
}

// toInt64 is C's (long) cast of a double as x86-64 computes it
// (cvttsd2si): truncation, and the smallest long for NaN and for values
// out of range. Go leaves those to the machine, and arm64 saturates.
func toInt64(f float64) int64 {
	if f != f || f >= 1<<63 || f < -(1<<63) {
		return math.MinInt64
	}
	return int64(f)
}

// toInt32 is C's (int) cast of a double on x86-64.
func toInt32(f float64) int32 {
	if f != f || f >= 1<<31 || f < -(1<<31) {
		return math.MinInt32
	}
	return int32(f)
}

// toUnsigned is C's (unsigned long) cast of a double as gcc compiles it
// for x86-64: below 2^63, and for NaN, a signed conversion (so a
// negative value wraps), from 2^63 on one of f - 2^63 with the top bit
// flipped back (so infinity and values past 2^64 give 0).
func toUnsigned(f float64) uint64 {
	if !(f >= 1<<63) {
		return uint64(toInt64(f))
	}
	return uint64(toInt64(f-(1<<63))) ^ 1<<63
}

// quote is lstrlib.c's addquoted: Lua 5.1 escapes only what its lexer
// needs, a newline as a backslash before it and NUL as \000; every other
// byte, control characters included, goes out as it is.
func quote(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\r':
			b.WriteString(`\r`)
		case 0:
			b.WriteString(`\000`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// checkNumber is luaL_checknumber: a number, or a string that reads as
// one the way Lua 5.1 reads them (gopher-lua's CheckNumber uses its own
// reading).
func checkNumber(L *lua.LState, n int) lua.LNumber {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return v
	case lua.LString:
		if f, ok := str2d(string(v)); ok {
			return lua.LNumber(f)
		}
	}
	L.TypeError(n, lua.LTNumber)
	return 0
}

// checkString is luaL_checkstring: a string, or a number written as
// "%.14g".
func checkString(L *lua.LState, n int) string {
	s, ok := asString(L.Get(n))
	if !ok {
		L.TypeError(n, lua.LTString)
	}
	return s
}

// asString is v as Lua 5.1 converts it to a string: a string as it is, a
// number as "%.14g"; ok is false for anything else.
func asString(v lua.LValue) (s string, ok bool) {
	switch v := v.(type) {
	case lua.LString:
		return string(v), true
	case lua.LNumber:
		return numberString(v), true
	}
	return "", false
}
