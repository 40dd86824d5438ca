package lua51

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// osDate is Lua 5.1's os.date([format [, time]]): "*t" a table, anything
// else each %x through C's strftime in the C locale, "!" first for UTC.
// gopher-lua's wrote "mon" for %a on a Tuesday, the time for %x, its own
// layout for %c, most other conversions (%j, %e, %D, %T, ...) as they are,
// yday 0 and isdst false in "*t", and a date for a time gmtime refuses.
func osDate(L *lua.LState) int {
	format := "%c"
	if L.Get(1) != lua.LNil {
		format = checkString(L, 1)
	}
	sec := time.Now().Unix()
	if L.Get(2) != lua.LNil {
		sec = toInt64(float64(checkNumber(L, 2)))
	}
	utc := strings.HasPrefix(format, "!")
	if utc {
		format = format[1:]
	}
	t, ok := brokenDown(sec, utc)
	if !ok { // gmtime and localtime refuse a year past C's int
		L.Push(lua.LNil)
		return 1
	}
	if format == "*t" {
		tb := L.CreateTable(0, 9)
		for _, f := range []struct {
			k string
			v int
		}{{"sec", t.Second()}, {"min", t.Minute()}, {"hour", t.Hour()}, {"day", t.Day()}, {"month", int(t.Month())},
			{"year", t.Year()}, {"wday", int(t.Weekday()) + 1}, {"yday", t.YearDay()}} {
			tb.RawSetString(f.k, lua.LNumber(f.v))
		}
		tb.RawSetString("isdst", lua.LBool(!utc && t.IsDST()))
		L.Push(tb)
		return 1
	}
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		b.WriteString(strftime(t, format[i], utc))
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// brokenDown is gmtime or localtime of sec, false where the year does not
// fit tm_year, a C int.
func brokenDown(sec int64, utc bool) (time.Time, bool) {
	const limit = 1 << 56 // seconds: about 2.3e9 years, past any int year
	if sec > limit || sec < -limit {
		return time.Time{}, false
	}
	t := time.Unix(sec, 0)
	if utc {
		t = t.UTC()
	}
	if y := int64(t.Year()) - 1900; y > math.MaxInt32 || y < math.MinInt32 {
		return time.Time{}, false
	}
	return t, true
}

// strftime is glibc's strftime("%c") of t in the C locale; a conversion
// it does not know comes out as written ("%q").
func strftime(t time.Time, c byte, utc bool) string {
	two := func(n int) string { return fmt.Sprintf("%02d", n) }
	hour12 := t.Hour() % 12
	if hour12 == 0 {
		hour12 = 12
	}
	wday, yday := int(t.Weekday()), t.YearDay()-1
	switch c {
	case 'a':
		return t.Weekday().String()[:3]
	case 'A':
		return t.Weekday().String()
	case 'b', 'h':
		return t.Month().String()[:3]
	case 'B':
		return t.Month().String()
	case 'c':
		return strftime(t, 'a', utc) + " " + strftime(t, 'b', utc) + " " + strftime(t, 'e', utc) + " " + strftime(t, 'T', utc) + " " + strftime(t, 'Y', utc)
	case 'C':
		return two(int(math.Floor(float64(t.Year()) / 100)))
	case 'd':
		return two(t.Day())
	case 'D', 'x':
		return two(int(t.Month())) + "/" + two(t.Day()) + "/" + two(t.Year()%100)
	case 'e':
		return fmt.Sprintf("%2d", t.Day())
	case 'F':
		return strftime(t, 'Y', utc) + "-" + two(int(t.Month())) + "-" + two(t.Day())
	case 'g':
		y, _ := t.ISOWeek()
		return two(y % 100)
	case 'G':
		y, _ := t.ISOWeek()
		return strconv.Itoa(y)
	case 'H':
		return two(t.Hour())
	case 'I':
		return two(hour12)
	case 'j':
		return fmt.Sprintf("%03d", yday+1)
	case 'k':
		return fmt.Sprintf("%2d", t.Hour())
	case 'l':
		return fmt.Sprintf("%2d", hour12)
	case 'm':
		return two(int(t.Month()))
	case 'M':
		return two(t.Minute())
	case 'n':
		return "\n"
	case 'p':
		if t.Hour() < 12 {
			return "AM"
		}
		return "PM"
	case 'r':
		return two(hour12) + ":" + two(t.Minute()) + ":" + two(t.Second()) + " " + strftime(t, 'p', utc)
	case 'R':
		return two(t.Hour()) + ":" + two(t.Minute())
	case 's':
		return strconv.FormatInt(t.Unix(), 10)
	case 'S':
		return two(t.Second())
	case 't':
		return "\t"
	case 'T', 'X':
		return two(t.Hour()) + ":" + two(t.Minute()) + ":" + two(t.Second())
	case 'u':
		return strconv.Itoa((wday+6)%7 + 1)
	case 'U':
		return two((yday + 7 - wday) / 7)
	case 'V':
		_, w := t.ISOWeek()
		return two(w)
	case 'w':
		return strconv.Itoa(wday)
	case 'W':
		return two((yday + 7 - (wday+6)%7) / 7)
	case 'y':
		return two(t.Year() % 100)
	case 'Y':
		return strconv.Itoa(t.Year())
	case 'z':
		_, off := t.Zone()
		sign := '+'
		if off < 0 {
			sign, off = '-', -off
		}
		return fmt.Sprintf("%c%02d%02d", sign, off/3600, off/60%60)
	case 'Z':
		if utc {
			return "GMT" // gmtime's zone
		}
		name, _ := t.Zone()
		return name
	case '%':
		return "%"
	}
	return "%" + string(c)
}
