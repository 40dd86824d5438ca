package kernels

import (
	"bytes"
	"math"
	"testing"

	"github.com/gluaproject/glua/device"
)

// unmix64 inverts mix64, so that a test can pick the counter whose hash,
// and so whose uniform, it wants.
func unmix64(z uint64) uint64 {
	z ^= z>>31 ^ z>>62
	z *= inverse(0x94D049BB133111EB)
	z ^= z>>27 ^ z>>54
	z *= inverse(0xBF58476D1CE4E5B9)
	z ^= z>>30 ^ z>>60
	return z
}

// inverse is a's inverse modulo 2^64, for odd a, by Newton's iteration:
// each step doubles the bits that are right.
func inverse(a uint64) uint64 {
	x := a // right to 3 bits for odd a
	for range 5 {
		x *= 2 - a*x
	}
	return x
}

func TestUnmix64InvertsMix64(t *testing.T) {
	rng := newRand(t)
	for _, z := range []uint64{0, 1, math.MaxUint64, rng.Uint64(), rng.Uint64()} {
		if got := mix64(unmix64(z)); got != z {
			t.Fatalf("mix64(unmix64(%#x)) = %#x", z, got)
		}
	}
}

func TestLogUnitIsWithinAnULPOfMathLog(t *testing.T) {
	rng := newRand(t)
	xs := []float64{0x1p-53, 0x1p-52 * 1.5, 0.075, 0.5 - 0x1p-53, sqrtHalf, math.Nextafter(sqrtHalf, 0)}
	for range 100000 {
		xs = append(xs, math.Ldexp(1+rng.Float64(), -1-rng.IntN(53)))
	}
	for _, x := range xs {
		got, want := logUnit(x), math.Log(x)
		if ulp := math.Abs(math.Nextafter(want, 0) - want); math.Abs(got-want) > ulp {
			t.Fatalf("logUnit(%v) = %v, math.Log gives %v", x, got, want)
		}
	}
}

// Φ(z) is the normal distribution function; the quantile's own error is
// about 1e-16 relative, and erfc's a few ulps.
func TestNormalQuantileInvertsTheDistributionFunction(t *testing.T) {
	rng := newRand(t)
	// the uniforms RandN draws, (k + 1/2)·2^-52: the extremes, either
	// side of where AS 241 changes polynomials, and random ones
	ks := []uint64{0, 1, 62545, 62546, 337769972052786, 337769972052787, 1<<51 - 1, 1 << 51, 1<<52 - 1}
	for range 100000 {
		ks = append(ks, rng.Uint64()>>12)
	}
	for _, k := range ks {
		u := (float64(k) + 0.5) * 0x1p-52
		z := normalQuantile(u)
		tail, p := u, 0.5*math.Erfc(-z/math.Sqrt2)
		if u > 0.5 {
			tail, p = 1-u, 0.5*math.Erfc(z/math.Sqrt2)
		}
		if math.Abs(p-tail) > 1e-13*tail {
			t.Fatalf("Φ(Φ⁻¹(%v)) differs by %g of the tail %v", u, math.Abs(p-tail)/tail, tail)
		}
		if normalQuantile(1-u) != -z {
			t.Fatalf("Φ⁻¹(1 - %v) = %v, not -%v", u, normalQuantile(1-u), z)
		}
	}
	if z := normalQuantile(0.5 * 0x1p-52); !(z < -8.2 && z > -8.3) {
		t.Errorf("the smallest uniform gives %v, want about -8.22", z)
	}
}

// TestRandNIsStandardNormalOverAMillionDraws: over n draws the mean has
// standard deviation 1/√n = 0.001 and the variance √(2/n) = 0.0014; the
// bounds are five of those. A 2-byte type's rounding moves neither much.
func TestRandNIsStandardNormalOverAMillionDraws(t *testing.T) {
	const n = 1_000_000
	for _, dt := range floatDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			x := make([]byte, n*dt.Size())
			if err := RandN(dt, x, 20240601, 0); err != nil {
				t.Fatal(err)
			}
			var sum, sq float64
			beyond := 0
			for i := range n {
				v := device.Get(dt, x, i)
				sum += v
				sq += v * v
				if math.Abs(v) > 1.959964 {
					beyond++
				}
			}
			mean := sum / n
			variance := sq/n - mean*mean
			if math.Abs(mean) > 0.005 || math.Abs(variance-1) > 0.007 {
				t.Errorf("mean %v, variance %v; want 0 and 1", mean, variance)
			}
			// 5% lie beyond ±1.96; the count's standard deviation is 218.
			if frac := float64(beyond) / n; math.Abs(frac-0.05) > 0.0011 {
				t.Errorf("%.4f of the draws lie beyond ±1.96, want 0.05", frac)
			}
		})
	}
}

// An offset is a place in one stream: the n elements from offset k are
// elements k to k+n-1 of the stream from 0, whatever the dtype.
func TestGeneratorsContinueOneStreamFromAnOffset(t *testing.T) {
	for name, gen := range map[string]func(device.DType, []byte, uint64, uint64) error{"Rand": Rand, "RandN": RandN} {
		for _, dt := range floatDTypes {
			whole, part := make([]byte, 1000*dt.Size()), make([]byte, 600*dt.Size())
			gen(dt, whole, 77, 0)
			gen(dt, part, 77, 400)
			if !bytes.Equal(part, whole[400*dt.Size():]) {
				t.Errorf("%s %s: offset 400 does not continue the stream from 0", name, dt)
			}
		}
	}
}

func TestRandNRejectsIntegerDTypes(t *testing.T) {
	if err := RandN(device.Int32, make([]byte, 8), 1, 0); err == nil || err.Error() != "randn: int32 is not supported (float32, float64, float16, bfloat16)" {
		t.Errorf("RandN(int32) = %v", err)
	}
}

// Every uniform the float32 generator can draw, 2^23 of them and each
// with either sign, against the float64 quantile: Giles's erfinv and the
// float32 logarithm stay within 5 float32 ulps of Φ⁻¹ (measured: 4.4),
// and the logarithm within one of math.Log.
func TestRandNFloat32IsTheQuantileWithinFiveULPsForEveryUniform(t *testing.T) {
	for k := uint64(0); k < 1<<23; k++ {
		v := float32(k*2+1) * 0x1p-25
		m := float32(float32(4*v) * float32(1-v))
		got, want := logUnit32(m), math.Log(float64(m))
		if ulp := math.Abs(float64(math.Nextafter32(float32(want), 0)) - want); math.Abs(float64(got)-want) > ulp {
			t.Fatalf("logUnit32(%v) = %v, math.Log gives %v", m, got, want)
		}
		ref := normalQuantile(1 - float64(v)) // 1 - v is exact in float64
		r := float32(ref)
		ulp := float64(math.Nextafter32(r, float32(math.Inf(1))) - r)
		for sign, c := range [2]uint64{unmix64(k << 40), unmix64(1<<63 | k<<40)} {
			z := float64(normal32At(c))
			if sign == 1 {
				z = -z
			}
			if math.Abs(z-ref) > 5*ulp {
				t.Fatalf("v = (2·%d + 1)·2^-25, sign %d: z = %v, Φ⁻¹(1 - v) = %v", k, sign, z, ref)
			}
		}
	}
	if z := normal32At(unmix64(0)); !(z > 5.4 && z < 5.42) {
		t.Errorf("the smallest uniform gives %v, want about 5.41", z)
	}
}

// float64 draws keep the float64 quantile: these are the values seed 7
// gave before float32 took its own formula.
func TestRandNFloat64KeepsItsValues(t *testing.T) {
	x := make([]byte, 4*8)
	if err := RandN(device.Float64, x, 7, 0); err != nil {
		t.Fatal(err)
	}
	want := []uint64{0xbfee0c355b0c22d0, 0x3ff296dff491080d, 0x3fe3421fc3abdec4, 0xbff1a364c21aa1ce}
	for i, w := range want {
		if got := math.Float64bits(device.Get(device.Float64, x, i)); got != w {
			t.Errorf("element %d: %#x (%v), want %#x (%v)", i, got, math.Float64frombits(got), w, math.Float64frombits(w))
		}
	}
}
