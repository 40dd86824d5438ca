package lua51

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

func TestNumbersAreWrittenAsLua51WritesThem(t *testing.T) {
	for _, tc := range []struct {
		n    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "-0"}, {1, "1"}, {-1, "-1"}, {0.1, "0.1"}, {1.0 / 3, "0.33333333333333"},
		{2.0 / 3, "0.66666666666667"}, {1e14, "1e+14"}, {1e15, "1e+15"}, {123456789012345, "1.2345678901234e+14"},
		{1e-4, "0.0001"}, {1e-5, "1e-05"}, {1e100, "1e+100"}, {math.Pow(2, 53), "9.007199254741e+15"},
		{math.Pow(2, 63), "9.2233720368548e+18"}, {math.MaxFloat64, "1.7976931348623e+308"}, {5e-324, "4.9406564584125e-324"},
		{0.1 + 0.2, "0.3"}, {99999999999999.9, "1e+14"}, {100, "100"},
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"}, {-math.NaN(), "-nan"},
	} {
		if got := numberString(lua.LNumber(tc.n)); got != tc.want {
			t.Errorf("numberString(%v) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestNumbersMatchLua51OnRandomValues(t *testing.T) {
	lua51Path(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	var src strings.Builder
	var values []float64
	for i := 0; i < 2000; i++ {
		var f float64
		switch rng.IntN(3) {
		case 0:
			f = math.Float64frombits(rng.Uint64())
		case 1:
			f = (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(40)-20))
		default:
			f = float64(rng.Int64N(1<<54) - 1<<53)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		values = append(values, f)
		// %a-free: a decimal with 17 digits reads back exactly.
		fmt.Fprintf(&src, "print(string.format('%%.14g', %s))\n", strings.ReplaceAll(fmt.Sprintf("%.17g", f), "+", ""))
	}
	lines := strings.Split(runLua51(t, src.String()), "\n")
	for i, f := range values {
		if got := numberString(lua.LNumber(f)); got != lines[i] {
			t.Errorf("%.17g: %q, lua5.1 %q", f, got, lines[i])
		}
	}
}
