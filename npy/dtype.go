package npy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gluaproject/glua/device"
)

// descrs are NumPy's dtypes that glua has: kind and size in bytes, as in
// '<f4'. NumPy writes them little-endian ('<'), or with no byte order ('|')
// for one-byte types.
var descrs = []struct {
	dt   device.DType
	kind byte
	size int
}{
	{device.Float32, 'f', 4},
	{device.Float64, 'f', 8},
	{device.Float16, 'f', 2},
	{device.Int32, 'i', 4},
	{device.Int64, 'i', 8},
	{device.Uint8, 'u', 1},
}

// errBFloat16 is the refusal to write bfloat16, which NumPy has no dtype
// for. Saving it as float32 behind the caller's back would double the file
// and change the dtype a reader gets; converting is the caller's choice.
var errBFloat16 = errors.New("bfloat16 has no NumPy dtype; convert the array to float32 first, which holds every bfloat16 value exactly")

// Descr is NumPy's dtype string for dt, little-endian: '<f4' for float32,
// '|u1' for uint8. bfloat16 has none, and is an error.
func Descr(dt device.DType) (string, error) {
	if dt == device.BFloat16 {
		return "", errBFloat16
	}
	for _, d := range descrs {
		if d.dt == dt {
			order := byte('<')
			if d.size == 1 {
				order = '|'
			}
			return string(order) + string(d.kind) + strconv.Itoa(d.size), nil
		}
	}
	return "", fmt.Errorf("invalid dtype %s", dt)
}

// parseDescr maps a NumPy dtype string to glua's dtype, and says whether
// the data is big-endian.
func parseDescr(s string) (dt device.DType, bigEndian bool, err error) {
	if len(s) >= 2 && s[1] == 'O' {
		return device.Invalid, false, fmt.Errorf("object arrays (dtype %s) hold Python objects, not numbers; glua reads arrays of numbers only", pyQuote(s))
	}
	if len(s) >= 3 && strings.IndexByte("<>|=", s[0]) >= 0 {
		for _, d := range descrs {
			if d.kind != s[1] || strconv.Itoa(d.size) != s[2:] {
				continue
			}
			switch {
			case d.size == 1, s[0] == '<':
				return d.dt, false, nil
			case s[0] == '>':
				return d.dt, true, nil
			}
			return device.Invalid, false, fmt.Errorf("dtype %s does not say whether it is little- or big-endian", pyQuote(s))
		}
	}
	return device.Invalid, false, fmt.Errorf("unsupported dtype %s%s; glua reads %s", pyQuote(s), numpyName(s), supported())
}

// numpyName is NumPy's name for a dtype string, as " (uint32)", where it
// has a short one.
func numpyName(s string) string {
	if len(s) < 3 {
		return ""
	}
	bits, err := strconv.Atoi(s[2:])
	if err != nil {
		return ""
	}
	switch s[1] {
	case 'b':
		return " (bool)"
	case 'i':
		return fmt.Sprintf(" (int%d)", 8*bits)
	case 'u':
		return fmt.Sprintf(" (uint%d)", 8*bits)
	case 'f':
		return fmt.Sprintf(" (float%d)", 8*bits)
	case 'c':
		return fmt.Sprintf(" (complex%d)", 8*bits)
	case 'U', 'S':
		return " (a string type)"
	}
	return ""
}

// pyQuote quotes s as Python prints a string, where it can: 'f4'.
func pyQuote(s string) string {
	for _, c := range s {
		if c < ' ' || c > '~' || c == '\'' || c == '\\' {
			return strconv.Quote(s)
		}
	}
	return "'" + s + "'"
}

// supported lists the dtypes glua reads, for error messages.
func supported() string {
	parts := make([]string, len(descrs))
	for i, d := range descrs {
		s, _ := Descr(d.dt)
		parts[i] = fmt.Sprintf("%s '%s'", d.dt, s)
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
