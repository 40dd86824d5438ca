package arraytext

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"

	"github.com/gluaproject/glua/device"
)

// Precision is the most decimals a float is written with (of the mantissa
// in scientific notation).
const Precision = 4

// words are the n elements stored in data as dt, each written as the
// array's format says and right-aligned to the widest.
func words(dt device.DType, data []byte, n int) []string {
	var out []string
	if dt.IsFloat() {
		values := make([]float64, n)
		for i := range values {
			values[i] = device.Get(dt, data, i)
		}
		out = floatWords(dt, values)
	} else {
		out = make([]string, n)
		for i := range out {
			out[i] = strconv.FormatInt(intAt(dt, data, i), 10)
		}
	}
	width := 0
	for _, w := range out {
		width = max(width, len(w))
	}
	for i, w := range out {
		out[i] = strings.Repeat(" ", width-len(w)) + w
	}
	return out
}

// intAt reads an integer element exactly: device.Get's float64 would
// round int64s past 2^53.
func intAt(dt device.DType, data []byte, i int) int64 {
	if dt == device.Int64 {
		return int64(binary.LittleEndian.Uint64(data[8*i:]))
	}
	return int64(device.Get(dt, data, i))
}

// floatWords writes values, stored as dt, with one notation and one
// number of decimals, as NumPy does: the decimals of the element that
// needs most, where an element needs those of the fewest digits that read
// back as the same dt value (so a float32 0.1 needs one), up to
// Precision.
func floatWords(dt device.DType, values []float64) []string {
	verb := byte('f')
	if scientific(values) {
		verb = 'e'
	}
	short := make([]shortForm, len(values))
	decimals := 0
	for i, v := range values {
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			short[i] = shortest(v, dt)
			decimals = max(decimals, short[i].decimalsNeeded(v, verb))
		}
	}
	out := make([]string, len(values))
	expDigits := 0
	for i, v := range values {
		if short[i].digits > 0 && short[i].fractionDigits(verb) == decimals {
			// Its shortest digits, which may differ from v's digits
			// rounded to nearest where v lies half-way (a float16 2^-6 is
			// 1.563e-02, not 1.562e-02). Shorter ones are continued with
			// v's own, as are the integer digits (a float16 39616 is
			// 39616., not 39600.).
			v = short[i].value
		}
		out[i] = floatWord(v, verb, decimals)
		if e := strings.IndexByte(out[i], 'e'); e >= 0 {
			expDigits = max(expDigits, len(out[i])-e-2)
		}
	}
	if expDigits > 2 {
		for i, w := range out {
			out[i] = padExponent(w, expDigits)
		}
	}
	return out
}

// shortForm is the shortest decimal that reads back as a stored value.
type shortForm struct {
	value  float64 // the decimal, as the nearest float64
	digits int     // significant
	exp    int     // of the first digit
}

// shortest is v's shortest decimal form among the values of dt.
func shortest(v float64, dt device.DType) shortForm {
	var s string
	switch dt {
	case device.Float64:
		s = strconv.FormatFloat(v, 'e', -1, 64)
	case device.Float32:
		s = strconv.FormatFloat(v, 'e', -1, 32)
	default:
		s = shortestHalf(v, dt)
	}
	f, _ := strconv.ParseFloat(s, 64)
	e := strings.IndexByte(s, 'e')
	exp, _ := strconv.Atoi(s[e+1:])
	digits := len(strings.Replace(strings.TrimPrefix(s[:e], "-"), ".", "", 1))
	return shortForm{value: f, digits: digits, exp: exp}
}

// shortestHalf is shortest's text for the 2-byte floats, which strconv
// does not know: the fewest digits that convert back to the same bits.
// Of the decimals with that many digits, the nearest to v on either side
// are the ones to try: the nearest overall may miss where v's neighbours
// are closer on one side (a power of two).
func shortestHalf(v float64, dt device.DType) string {
	var stored, back [2]byte
	device.Set(dt, stored[:], 0, v)
	same := func(s string) bool {
		f, _ := strconv.ParseFloat(s, 64)
		device.Set(dt, back[:], 0, f)
		return back == stored
	}
	for digits := 0; ; digits++ {
		s := strconv.FormatFloat(v, 'e', digits, 64)
		if same(s) || digits == 16 {
			return s
		}
		near, _ := strconv.ParseFloat(s, 64)
		exp, _ := strconv.Atoi(s[strings.IndexByte(s, 'e')+1:])
		step := math.Pow(10, float64(exp-digits))
		if near > v {
			step = -step
		}
		if other := strconv.FormatFloat(near+step, 'e', digits, 64); same(other) {
			return other
		}
	}
}

// fractionDigits is the place of the short form's last digit after the
// point in the notation: negative where it stops short of the units.
func (s shortForm) fractionDigits(verb byte) int {
	if verb == 'e' {
		return s.digits - 1
	}
	return s.digits - 1 - s.exp
}

// decimals is how many decimals the short form has in the notation.
func (s shortForm) decimals(verb byte) int { return max(0, s.fractionDigits(verb)) }

// decimalsNeeded is how many decimals v takes: its short form's, or, if
// those are more than Precision, those of v rounded to Precision decimals
// without the trailing zeros.
func (s shortForm) decimalsNeeded(v float64, verb byte) int {
	if d := s.decimals(verb); d <= Precision {
		return d
	}
	r := strconv.FormatFloat(v, verb, Precision, 64)
	if verb == 'e' {
		r = r[:strings.IndexByte(r, 'e')]
	}
	return len(strings.TrimRight(r, "0")) - strings.IndexByte(r, '.') - 1
}

// scientific is NumPy's choice of notation, made on the finite non-zero
// magnitudes.
func scientific(values []float64) bool {
	lo, hi := math.Inf(1), 0.0
	for _, v := range values {
		if a := math.Abs(v); a != 0 && !math.IsInf(a, 0) && !math.IsNaN(a) {
			lo, hi = min(lo, a), max(hi, a)
		}
	}
	return hi >= 1e8 || hi > 0 && (lo < 1e-4 || hi/lo > 1e3)
}

// floatWord is v with the given notation and decimals; a whole number
// keeps its point ("1.", "1.e+08"), as NumPy writes a float.
func floatWord(v float64, verb byte, decimals int) string {
	switch {
	case math.IsNaN(v) && math.Signbit(v):
		return "-nan"
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(v, verb, decimals, 64)
	if decimals > 0 {
		return s
	}
	if e := strings.IndexByte(s, 'e'); e >= 0 {
		return s[:e] + "." + s[e:]
	}
	return s + "."
}

// padExponent widens w's exponent to digits, so that every exponent of an
// array has as many ("1.e+005", "1.e+100").
func padExponent(w string, digits int) string {
	e := strings.IndexByte(w, 'e')
	if e < 0 {
		return w
	}
	exp := w[e+2:]
	return w[:e+2] + strings.Repeat("0", digits-len(exp)) + exp
}
