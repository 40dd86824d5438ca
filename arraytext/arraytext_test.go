package arraytext

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/numpytest"
)

// array is a test array in host memory, with a count of what Format
// fetched from it.
type array struct {
	shape   []int
	dt      device.DType
	data    []byte
	fetched int // elements
	calls   int
}

func newArray(shape []int, dt device.DType, value func(i int) float64) *array {
	n := 1
	for _, d := range shape {
		n *= d
	}
	a := &array{shape: shape, dt: dt, data: make([]byte, n*dt.Size())}
	for i := 0; i < n; i++ {
		device.Set(dt, a.data, i, value(i))
	}
	return a
}

func (a *array) fetch(dst []byte, start, count int) error {
	a.fetched += count
	a.calls++
	copy(dst, a.data[start*a.dt.Size():(start+count)*a.dt.Size()])
	return nil
}

func (a *array) text(t *testing.T) string {
	t.Helper()
	s, err := Format(a.shape, a.dt, a.fetch)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestElementsAreWrittenAsTheDocSays(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name   string
		dt     device.DType
		values []float64
		want   string
	}{
		{"whole floats keep their point", device.Float32, []float64{1, 2, -3}, "[ 1.,  2., -3.]"},
		{"one number of decimals, at most four", device.Float64, []float64{0.5, 0.25, 1.0 / 3}, "[0.5000, 0.2500, 0.3333]"},
		{"the fewest decimals that show every element", device.Float64, []float64{0.5, 0.25}, "[0.50, 0.25]"},
		{"float32 rounding hidden by four decimals", device.Float32, []float64{0.1, 0.2}, "[0.1, 0.2]"},
		{"large magnitudes go scientific", device.Float64, []float64{1e8, 1}, "[1.e+08, 1.e+00]"},
		{"small magnitudes go scientific", device.Float64, []float64{1e-5, 0}, "[1.e-05, 0.e+00]"},
		{"a wide ratio goes scientific", device.Float64, []float64{0.001, 10}, "[1.e-03, 1.e+01]"},
		{"exponents share a width", device.Float64, []float64{1e-5, 1.5e100}, "[1.0e-005, 1.5e+100]"},
		{"infinities and NaNs as Lua 5.1 writes them", device.Float64, []float64{math.Inf(1), math.Inf(-1), nan, math.Copysign(nan, -1), 1.5},
			"[ inf, -inf,  nan, -nan,  1.5]"},
		{"non-finite values leave the notation to the others", device.Float32, []float64{math.Inf(1), 1e-9}, "[   inf, 1.e-09]"},
		{"only zeros", device.Float64, []float64{0, 0}, "[0., 0.]"},
		{"minus zero", device.Float64, []float64{math.Copysign(0, -1), 1}, "[-0.,  1.]"},
		{"float16 by its own shortest digits", device.Float16, []float64{0.1, 65504}, "[1.00e-01, 6.55e+04]"},
		{"bfloat16 by its own shortest digits", device.BFloat16, []float64{1.0 / 3, 2}, "[0.334, 2.000]"},
		{"int32", device.Int32, []float64{-5, 10, 300}, "[ -5,  10, 300]"},
		{"int64 exactly past 2^53", device.Int64, nil, "[9007199254740993,               -1]"},
		{"uint8", device.Uint8, []float64{0, 255, 7}, "[  0, 255,   7]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a *array
			if tc.values == nil {
				a = &array{shape: []int{2}, dt: device.Int64, data: make([]byte, 16)}
				for i, v := range []int64{1<<53 + 1, -1} {
					for b := 0; b < 8; b++ {
						a.data[8*i+b] = byte(uint64(v) >> (8 * b))
					}
				}
			} else {
				a = newArray([]int{len(tc.values)}, tc.dt, func(i int) float64 { return tc.values[i] })
			}
			if got := a.text(t); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestEmptyArraysAreBracketsAndFetchNothing(t *testing.T) {
	for _, shape := range [][]int{{0}, {2, 0}, {0, 3, 4}} {
		a := newArray(shape, device.Float32, nil)
		if got := a.text(t); got != "[]" || a.calls != 0 {
			t.Errorf("shape %v: %q after %d fetches", shape, got, a.calls)
		}
	}
}

// Printing a large device array must not download it: only the corners
// a summary shows, in as few pieces as they make.
func TestLargeArraysFetchOnlyTheElementsShown(t *testing.T) {
	for _, tc := range []struct {
		shape          []int
		elements, runs int
	}{
		{[]int{1000}, 1000, 1},               // at the threshold: all of it, at once
		{[]int{30, 30}, 900, 1},              // small: one run
		{[]int{1 << 20}, 6, 2},               // first three and last three
		{[]int{4096, 4096}, 36, 8},           // 3 at each end of 6 rows; a row's end runs into the next's start
		{[]int{5000, 2}, 12, 2},              // short rows run together
		{[]int{2, 5000}, 12, 3},              // a dimension of 2 is shown whole
		{[]int{100, 100, 100}, 216, 44},      // 6 x 6 x (3 + 3)
		{[]int{7, 7, 7, 7}, 1296, 260},       // every dimension summarised
		{[]int{1, 1, 1, 1001}, 6, 2},         // leading dimensions of one
		{[]int{1001, 1, 1, 1}, 6, 2},         // and trailing ones
		{[]int{3, 400}, 18, 4},               // rows shown whole are still cut
		{[]int{4, 4, 4, 4, 4}, 1024, 1},      // past the threshold, nothing longer than 6
		{[]int{2, 3, 4, 5, 6, 7}, 4320, 721}, // only the last dimension is cut
	} {
		a := newArray(tc.shape, device.Float32, func(i int) float64 { return float64(i % 97) })
		a.text(t)
		if a.fetched != tc.elements || a.calls != tc.runs {
			t.Errorf("shape %v: fetched %d elements in %d runs, want %d in %d", tc.shape, a.fetched, a.calls, tc.elements, tc.runs)
		}
	}
}

func TestAFailedFetchIsTheError(t *testing.T) {
	boom := errors.New("device lost")
	_, err := Format([]int{4}, device.Float32, func([]byte, int, int) error { return boom })
	if !errors.Is(err, boom) {
		t.Errorf("got %v, want %v", err, boom)
	}
}

// NumPy writes every array as glua does, given glua's precision: its
// array2string with precision 4 and one number of decimals throughout
// (floatmode "maxprec_equal"), with ", " between elements.
func TestFormatMatchesNumPy(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	var cases []*array
	var input strings.Builder
	for i := 0; i < 400; i++ {
		a := randomArray(rng)
		cases = append(cases, a)
		fmt.Fprintf(&input, "%s %s %s\n", numpyName(a.dt), strings.Trim(fmt.Sprint(a.shape), "[]"), hex.EncodeToString(a.data))
	}
	in := filepath.Join(t.TempDir(), "arrays.txt")
	if err := os.WriteFile(in, []byte(input.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := numpytest.Run(t, `
import sys, numpy as np
np.set_printoptions(precision=4, floatmode="maxprec_equal")
for line in open(sys.argv[1]):
    dt, *rest = line.split(" ")
    shape = [int(d) for d in rest[:-1]]
    a = np.frombuffer(bytes.fromhex(rest[-1].strip()), dtype=np.dtype(dt).newbyteorder("<")).reshape(shape)
    print(np.array2string(a, separator=", "))
    print("\x00")
`, in)
	want := strings.Split(out, "\n\x00\n")
	for i, a := range cases {
		if got := a.text(t); got != want[i] {
			t.Errorf("%s %v:\nglua\n%s\nNumPy\n%s", a.dt, a.shape, firstDifference(got, want[i]), firstDifference(want[i], got))
		}
	}
}

func numpyName(dt device.DType) string {
	return map[device.DType]string{device.Float32: "float32", device.Float64: "float64", device.Float16: "float16",
		device.Int32: "int32", device.Int64: "int64", device.Uint8: "uint8"}[dt]
}

// randomArray is an array NumPy has a dtype for, of a random shape (some
// past the threshold) and values of one random kind.
func randomArray(rng *rand.Rand) *array {
	dts := []device.DType{device.Float32, device.Float64, device.Float16, device.Int32, device.Int64, device.Uint8}
	dt := dts[rng.IntN(len(dts))]
	shape := make([]int, 1+rng.IntN(4))
	for i := range shape {
		shape[i] = rng.IntN(9)
		if rng.IntN(5) == 0 {
			shape[i] = rng.IntN(1200)
		}
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	if n > 1<<20 {
		shape = shape[:1]
	}
	scale := math.Pow(10, float64(rng.IntN(24)-12))
	kind := rng.IntN(5)
	return newArray(shape, dt, func(int) float64 {
		switch {
		case !dt.IsFloat():
			return float64(rng.Int64N(1<<31) - 1<<30)
		case kind == 0:
			return float64(rng.IntN(2000) - 1000)
		case kind == 1 && rng.IntN(20) == 0:
			return []float64{math.Inf(1), math.Inf(-1), math.NaN()}[rng.IntN(3)]
		case kind == 2:
			return float64(rng.IntN(1<<12)-1<<11) / float64(int(1)<<rng.IntN(16)) // ties at the cut
		case kind == 3:
			return randomBits(rng, dt)
		}
		return (rng.Float64() - 0.5) * scale
	})
}

// randomBits is a value of dt from random bits: subnormals, the extremes,
// every exponent. A NaN is made positive: NumPy writes "nan" whatever its
// sign, glua "-nan" for a negative one, as Lua 5.1 does.
func randomBits(rng *rand.Rand, dt device.DType) float64 {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	if v := device.Get(dt, b, 0); !math.IsNaN(v) {
		return v
	}
	return math.NaN()
}

// firstDifference is the line of a where it first differs from b.
func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range al {
		if i >= len(bl) || al[i] != bl[i] {
			return fmt.Sprintf("line %d: %s", i+1, al[i])
		}
	}
	return "(the same lines, and more)"
}

// TestPrintingIsLinearInTheTextItWrites: the text of an array of many
// dimensions, or of many shown elements, takes time in proportion to its
// length (it once copied each nested level's text into its parent's and
// built each indent anew, quadratic in the dimensions).
func TestPrintingIsLinearInTheTextItWrites(t *testing.T) {
	ones := make([]int, device.MaxDims)
	for i := range ones {
		ones[i] = 1
	}
	start := time.Now()
	got := newArray(ones, device.Float32, func(int) float64 { return 7 }).text(t)
	if want := strings.Repeat("[", device.MaxDims) + "7." + strings.Repeat("]", device.MaxDims); got != want {
		t.Fatalf("64 dimensions of 1 print as %q", got)
	}
	twos := make([]int, 16) // 2^16 elements, every one shown
	for i := range twos {
		twos[i] = 2
	}
	big := newArray(twos, device.Int32, func(i int) float64 { return float64(i % 10) })
	text := big.text(t)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("printing took %v", d)
	}
	if big.fetched != 1<<16 || strings.Count(text, ",") != 1<<16-1 || !strings.HasPrefix(text, strings.Repeat("[", 16)+"0, 1]") {
		t.Fatalf("a 2^16-element array of 16 dimensions printed %d commas from %d elements fetched: %.60q", strings.Count(text, ","), big.fetched, text)
	}
}
