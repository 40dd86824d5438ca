package profile

import (
	"html"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// size is a byte count as people read it, in IEC units ("1.5 GiB").
func size(n uint64) string { return humanize.IBytes(n) }

// seconds is a tick of the time axis, to the precision its step calls for.
func seconds(d time.Duration, step float64) string {
	return strconv.FormatFloat(d.Seconds(), 'f', decimals(step), 64) + " s"
}

// duration is a length of time in the unit that suits it: "6.31 ms",
// "2.5 s", "125 s".
func duration(d time.Duration) string {
	v, unit := d.Seconds(), "s"
	switch {
	case d < time.Millisecond:
		v, unit = float64(d)/float64(time.Microsecond), "µs"
	case d < time.Second:
		v, unit = float64(d)/float64(time.Millisecond), "ms"
	}
	digits := 2
	switch {
	case v >= 100:
		digits = 0
	case v >= 10:
		digits = 1
	}
	return strconv.FormatFloat(v, 'f', digits, 64) + " " + unit
}

// decimals is how many a tick step of 1, 2 or 5 times a power of ten needs.
func decimals(step float64) int {
	return max(0, int(math.Ceil(-math.Log10(step)-1e-9)))
}

// sizeStep is the smallest round step for at most six ticks up to top
// bytes: 1, 2, 2.5 or 5 times a power of ten of the largest IEC unit under
// top, so that the labels read 256 MiB, 512 MiB, 768 MiB.
func sizeStep(top float64) float64 {
	unit := 1.0
	for unit*1024 <= top {
		unit *= 1024
	}
	best := 1024 * unit
	for _, m := range []float64{1, 2, 2.5, 5} {
		for _, p := range []float64{0.01, 0.1, 1, 10, 100} {
			if step := m * p * unit; step >= 1 && top/step <= 6 && step < best {
				best = step
			}
		}
	}
	return best
}

// timeStep is a round step in seconds (1, 2 or 5 times a power of ten)
// for at most eight ticks up to top seconds.
func timeStep(top float64) float64 {
	if top <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(top/8)))
	for _, m := range []float64{1, 2, 5, 10} {
		if top/(m*p) <= 8 {
			return m * p
		}
	}
	return 10 * p
}

// num writes a coordinate with the precision a screen can show.
func num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "0"
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

// esc escapes text for the page; it is also safe in attribute values.
func esc(s string) string { return html.EscapeString(s) }

// plural is "1 array" or "3 arrays".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// count writes a number with thousands separated, as 12,345.
func count(n int) string { return humanize.Comma(int64(n)) }

// slug is an id-safe form of s.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
