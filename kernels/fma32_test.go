package kernels

import (
	"math"
	"math/big"
	"testing"
)

// fma32Exact rounds x·y + z to float32 once, through math/big.
func fma32Exact(x, y, z float32) float32 {
	p := new(big.Float).SetPrec(0).SetFloat64(float64(x))
	p.SetMode(big.ToNearestEven)
	exact := new(big.Float).SetPrec(2000).Mul(p, big.NewFloat(float64(y)))
	exact.Add(exact, big.NewFloat(float64(z)))
	f, _ := exact.Float32()
	return f
}

// fma32 must round as the GPU's fma.rn.f32 does: the cases where
// rounding twice would err (a float64 sum exactly halfway between two
// float32s with a remainder either way), ties, cancellations, and random
// operands of every scale the generator uses.
func TestFma32RoundsOnceAsTheDeviceDoes(t *testing.T) {
	rng := newRand(t)
	type c struct{ x, y, z float32 }
	cases := []c{
		{1, 1, 0x1p-24},                     // 1 + 2^-24: a tie, to even
		{1 + 0x1p-23, 1 + 0x1p-23, 0},       // 1 + 2^-22 + 2^-46
		{1 + 0x1p-12, 1 + 0x1p-12, 0x1p-60}, // 1 + 2^-11 + 2^-24 + 2^-60: above the tie
		{1 + 0x1p-12, 1 + 0x1p-12, -0x1p-60},
		{-(1 + 0x1p-12), 1 + 0x1p-12, 0x1p-60},
		{1, 1, -1}, {3, 0.5, -1.5}, {0, 5, -0.0},
	}
	for range 2_000_000 {
		e := rng.IntN(60) - 30
		x := float32(math.Ldexp(rng.Float64()*2-1, e))
		y := float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(20)-10))
		z := float32(math.Ldexp(rng.Float64()*2-1, e+rng.IntN(50)-25))
		cases = append(cases, c{x, y, z})
		// a z that puts x·y + z next to a float32 halfway point
		h := float32(float64(x) * float64(y))
		cases = append(cases, c{x, y, -h + float32(math.Ldexp(float64(h), -24))})
	}
	for _, k := range cases {
		if got, want := fma32(k.x, k.y, k.z), fma32Exact(k.x, k.y, k.z); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%v, %v, %v) = %v, want %v", k.x, k.y, k.z, got, want)
		}
	}
}
