package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gluaproject/glua/device"
)

// newRand draws a fresh seed for every run and logs it, so that a failure
// on the GPU machine can be replayed.
func newRand(t testing.TB) *rand.Rand {
	seed := rand.Uint64()
	t.Logf("random seed %d", seed)
	return rand.New(rand.NewPCG(seed, 0x67707521))
}

// hostileValues returns n elements of dt drawn to hit every rounding and
// conversion rule: ordinary values of varied magnitude, exact halfway cases
// for the 2-byte floats, zeros of both signs, subnormals, infinities, NaN,
// and values beyond the integer and float16 ranges (saturation, overflow).
func hostileValues(rng *rand.Rand, dt device.DType, n int) []byte {
	b := make([]byte, n*dt.Size())
	special := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0xfff8000000000000), math.Float64frombits(0x7ffa400000000000), math.Float64frombits(0xfffd000000000000),
		65504, 65520, -70000, 1e-7, 6e-8, 3e-45, 1e-310, 255.5, -0.75, 2147483647.5, -2147483649,
		9.3e18, -9.3e18, 1 + 0x1p-11, 1 + 3*0x1p-11, 1 + 0x1p-8, 3.4e38}
	for i := 0; i < n; i++ {
		var v float64
		switch r := rng.IntN(10); {
		case r == 0:
			v = special[rng.IntN(len(special))]
		case dt == device.Uint8:
			v = float64(rng.IntN(256))
		case dt == device.Int32:
			v = float64(int32(rng.Uint32()))
		case dt == device.Int64:
			if r < 5 {
				v = float64(int64(rng.Uint64())) // beyond 2^53: rounding on load
			} else {
				v = float64(rng.IntN(2_000_001) - 1_000_000)
			}
		case r < 3:
			v = float64(rng.IntN(2001) - 1000)
		default:
			v = (rng.Float64()*2 - 1) * math.Pow(2, float64(rng.IntN(41)-20))
		}
		if dt == device.Int64 && rng.IntN(4) == 0 {
			// Store raw bits: int64 values a float64 cannot hold exactly.
			u := rng.Uint64()
			for k := range 8 {
				b[8*i+k] = byte(u >> (8 * k))
			}
			continue
		}
		device.Set(dt, b, i, v)
	}
	return b
}

// sameElements compares two arrays of dt element by element: bits must be
// equal, NaNs' included (the CPU backend gives the GPU's NaNs, nan.go),
// except that a float64 NaN equals any other: where two NaN operands meet
// either is right, and these arrays do not say whether two met (the
// runtime's NaN test tells the cases apart).
func sameElements(dt device.DType, got, want []byte) (int, bool) {
	n := len(want) / dt.Size()
	for i := 0; i < n; i++ {
		if string(got[i*dt.Size():(i+1)*dt.Size()]) == string(want[i*dt.Size():(i+1)*dt.Size()]) {
			continue
		}
		if dt == device.Float64 && math.IsNaN(device.Get(dt, got, i)) && math.IsNaN(device.Get(dt, want, i)) {
			continue
		}
		return i, false
	}
	return -1, true
}
