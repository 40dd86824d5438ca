package kernels

import (
	"bytes"
	"math"
	"slices"
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

// Every u1 and every angle the float32 generator can draw, 2^24 of each:
// the logarithm within one float32 ulp of math.Log, sin and cos within
// 2^-23 of math.Sin and math.Cos, an ulp of values below 1 (measured:
// 1.44·2^-24).
func TestRandNFloat32LogSinAndCosAreWithinAnULPForEveryUniform(t *testing.T) {
	for k := uint32(0); k < 1<<24; k++ {
		u1 := float32(k+1) * 0x1p-24
		got, want := logUnit32(u1), math.Log(float64(u1))
		if ulp := math.Abs(float64(math.Nextafter32(float32(want), 0)) - want); math.Abs(float64(got)-want) > ulp {
			t.Fatalf("logUnit32(%v) = %v, math.Log gives %v", u1, got, want)
		}
		s, c := sinCosTurn(k)
		a := 2 * math.Pi * float64(k) * 0x1p-24
		if math.Abs(float64(s)-math.Sin(a)) > 0x1p-23 || math.Abs(float64(c)-math.Cos(a)) > 0x1p-23 {
			t.Fatalf("sinCosTurn(%d) = %v, %v; math gives %v, %v", k, s, c, math.Sin(a), math.Cos(a))
		}
	}
}

// A pair is r·cos and r·sin of its hash's uniforms, as float64 computes
// them, within a few float32 ulps of r: at the smallest u1 (the largest
// r, 5.77), at u1 = 1 (r = 0), at the quarter turns, and at random.
func TestRandNFloat32PairIsBoxMullerOfItsHash(t *testing.T) {
	rng := newRand(t)
	hs := []uint64{0, 1<<24 - 1, 1<<40 - 1, 1<<64 - 1, 1 << 38, 1 << 39, 3 << 38, 1<<40 | 1<<37, 0xFFFFFF<<40 | 0x400000<<16}
	for range 100000 {
		hs = append(hs, rng.Uint64())
	}
	for _, h := range hs {
		z0, z1 := normal32Pair(unmix64(h))
		u1 := float64(h>>40+1) * 0x1p-24
		r := math.Sqrt(-2 * math.Log(u1))
		a := 2 * math.Pi * float64(h>>16&(1<<24-1)) * 0x1p-24
		tol := 4 * 0x1p-24 * max(r, 0x1p-20)
		if math.Abs(float64(z0)-r*math.Cos(a)) > tol || math.Abs(float64(z1)-r*math.Sin(a)) > tol {
			t.Fatalf("hash %#x: pair %v, %v; want %v, %v", h, z0, z1, r*math.Cos(a), r*math.Sin(a))
		}
	}
	if z0, z1 := normal32Pair(unmix64(0)); !(z0 > 5.76 && z0 < 5.77 && z1 == 0) {
		t.Errorf("the smallest uniform at angle 0 gives %v, %v; want about 5.768 and 0", z0, z1)
	}
}

// Draws from every counter, whatever call they come from: the first n
// values from offset k are values k to k+n-1 of the stream from 0, for
// odd and even offsets and lengths, where a call starts or ends inside a
// pair.
func TestRandNIsOneStreamWhereverACallStartsAndEnds(t *testing.T) {
	for _, dt := range floatDTypes {
		whole := make([]byte, 40*dt.Size())
		RandN(dt, whole, 99, 0)
		for offset := 0; offset < 8; offset++ {
			for n := 0; n <= 9; n++ {
				part := make([]byte, n*dt.Size())
				RandN(dt, part, 99, uint64(offset))
				if !bytes.Equal(part, whole[offset*dt.Size():(offset+n)*dt.Size()]) {
					t.Errorf("%s: %d values from offset %d are not the stream's", dt, n, offset)
				}
			}
		}
	}
}

// normalCDF is Φ.
func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// TestRandNPassesKolmogorovSmirnovOverTwoMillionDraws: the largest
// distance between the draws' distribution function and Φ, times √n, is
// below 1.95 with probability 0.999 for normal draws. The 2-byte floats
// are left out: their rounding alone moves the function by more.
func TestRandNPassesKolmogorovSmirnovOverTwoMillionDraws(t *testing.T) {
	const n = 2_000_000
	for _, dt := range []device.DType{device.Float32, device.Float64} {
		x := make([]byte, n*dt.Size())
		if err := RandN(dt, x, 31337, 1); err != nil {
			t.Fatal(err)
		}
		zs := make([]float64, n)
		for i := range zs {
			zs[i] = device.Get(dt, x, i)
		}
		slices.Sort(zs)
		d := 0.0
		for i, z := range zs {
			p := normalCDF(z)
			d = max(d, math.Abs(p-float64(i)/n), math.Abs(float64(i+1)/n-p))
		}
		if d*math.Sqrt(n) > 1.95 {
			t.Errorf("%s: Kolmogorov–Smirnov distance %.3g, √n·D = %.3f", dt, d, d*math.Sqrt(n))
		}
	}
}

// TestRandNHasNormalTailsAndIndependentHalves: over 2·10^6 draws, the
// counts beyond ±3 and ±4 are within five standard deviations of
// 2·10^6·2Φ(-t); the two values of a pair, which share a hash, have a
// correlation within five standard deviations (1/√10^6) of 0, and so do
// neighbours from different pairs. No float32 draw lies beyond ±5.768.
func TestRandNHasNormalTailsAndIndependentHalves(t *testing.T) {
	const n = 2_000_000
	for _, dt := range floatDTypes {
		x := make([]byte, n*dt.Size())
		if err := RandN(dt, x, 4242, 0); err != nil {
			t.Fatal(err)
		}
		beyond3, beyond4, largest := 0, 0, 0.0
		var within, across float64
		for i := range n {
			z := device.Get(dt, x, i)
			largest = max(largest, math.Abs(z))
			if math.Abs(z) > 3 {
				beyond3++
			}
			if math.Abs(z) > 4 {
				beyond4++
			}
			if i%2 == 1 {
				within += z * device.Get(dt, x, i-1)
			} else if i > 0 {
				across += z * device.Get(dt, x, i-1)
			}
		}
		for _, c := range []struct {
			t     float64
			count int
		}{{3, beyond3}, {4, beyond4}} {
			want := n * 2 * normalCDF(-c.t)
			if math.Abs(float64(c.count)-want) > 5*math.Sqrt(want) {
				t.Errorf("%s: %d draws beyond ±%v, want about %.0f", dt, c.count, c.t, want)
			}
		}
		if r := within / (n / 2); math.Abs(r) > 5/math.Sqrt(n/2) {
			t.Errorf("%s: the halves of a pair have correlation %.4f", dt, r)
		}
		if r := across / (n/2 - 1); math.Abs(r) > 5/math.Sqrt(n/2) {
			t.Errorf("%s: neighbours from two pairs have correlation %.4f", dt, r)
		}
		// bfloat16 rounds 5.768 up to 5.78125
		if dt != device.Float64 && largest > 5.782 || dt == device.Float32 && largest > 5.769 {
			t.Errorf("%s: a draw of %v, beyond Box–Muller's 5.768", dt, largest)
		}
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
