package device

import (
	"math"
	"testing"
)

// halfFormat describes one 2-byte float type to the table-driven tests.
type halfFormat struct {
	name      string
	value     func(uint16) float32
	bits      func(float32) uint16
	mantBits  uint
	expBias   int
	expMask   uint16
	maxFinite float64
}

var halfFormats = []halfFormat{
	{"float16", Float16Value, Float16Bits, 10, 15, 0x7c00, 65504},
	{"bfloat16", BFloat16Value, BFloat16Bits, 7, 127, 0x7f80, 0x1.fep127},
}

func (f halfFormat) isNaN(h uint16) bool {
	return h&f.expMask == f.expMask && h&^(f.expMask|0x8000) != 0
}

// reference decodes h from the IEEE 754 definition, independently of the
// bit tricks in half.go.
func (f halfFormat) reference(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h&f.expMask) >> f.mantBits
	mant := float64(h & (1<<f.mantBits - 1))
	switch {
	case h&f.expMask == f.expMask && mant == 0:
		return math.Inf(int(sign))
	case h&f.expMask == f.expMask:
		return math.NaN()
	case exp == 0:
		return sign * math.Ldexp(mant, 1-f.expBias-int(f.mantBits))
	}
	return sign * math.Ldexp(1+mant/float64(uint(1)<<f.mantBits), exp-f.expBias)
}

func TestEveryHalfBitPatternDecodesExactlyAndRoundTrips(t *testing.T) {
	for _, f := range halfFormats {
		t.Run(f.name, func(t *testing.T) {
			for i := 0; i < 1<<16; i++ {
				h := uint16(i)
				v := f.value(h)
				if f.isNaN(h) {
					if !math.IsNaN(float64(v)) {
						t.Fatalf("%#04x is a NaN but decodes to %v", h, v)
					}
					if back := f.bits(v); !f.isNaN(back) || back&0x8000 != h&0x8000 {
						t.Fatalf("NaN %#04x encodes back to %#04x, not a NaN of the same sign", h, back)
					}
					continue
				}
				if want := f.reference(h); float64(v) != want || math.Signbit(float64(v)) != math.Signbit(want) {
					t.Fatalf("%#04x decodes to %v, want %v", h, v, want)
				}
				if back := f.bits(v); back != h {
					t.Fatalf("%#04x -> %v -> %#04x", h, v, back)
				}
			}
		})
	}
}

// Between every pair of neighbouring finite values the midpoint is exact in
// float32; it must round to the neighbour with the even last bit, and
// anything off the midpoint to the nearer neighbour.
func TestConversionRoundsToNearestEven(t *testing.T) {
	for _, f := range halfFormats {
		t.Run(f.name, func(t *testing.T) {
			for _, sign := range []uint16{0, 0x8000} {
				for h := uint16(0); h < f.expMask; h++ {
					lo, hi := sign|h, sign|(h+1) // hi may be the infinity
					a, b := float64(f.value(lo)), f.reference(hi)
					if h+1 == f.expMask {
						// The step to infinity is as if there were one more
						// binade: the midpoint sits half a step above the max.
						b = a + (a - float64(f.value(sign|(h-1))))
					}
					mid := float32((a + b) / 2)
					even := lo
					if lo&1 == 1 {
						even = hi
					}
					if got := f.bits(mid); got != even {
						t.Fatalf("midpoint %v of %#04x and %#04x rounds to %#04x, want %#04x", mid, lo, hi, got, even)
					}
					below := math.Nextafter32(mid, float32(a))
					above := math.Nextafter32(mid, float32(math.Copysign(math.Inf(1), b)))
					if mid == 0 {
						continue // the midpoint of ±0 and the first subnormal has nothing below it on this side
					}
					if got := f.bits(below); got != lo {
						t.Fatalf("%v, just short of the midpoint, rounds to %#04x, want %#04x", below, got, lo)
					}
					if got := f.bits(above); got != hi {
						t.Fatalf("%v, just past the midpoint, rounds to %#04x, want %#04x", above, got, hi)
					}
				}
			}
		})
	}
}

func TestConversionEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name string
		bits func(float32) uint16
		in   float32
		want uint16
	}{
		{"float16 largest finite", Float16Bits, 65504, 0x7bff},
		{"float16 overflows to +Inf", Float16Bits, 1e5, 0x7c00},
		{"float16 overflows to -Inf", Float16Bits, -70000, 0xfc00},
		{"float16 of float32 max", Float16Bits, math.MaxFloat32, 0x7c00},
		{"float16 smallest normal", Float16Bits, 0x1p-14, 0x0400},
		{"float16 largest subnormal", Float16Bits, 0x3ffp-24, 0x03ff},
		{"float16 smallest subnormal", Float16Bits, 0x1p-24, 0x0001},
		{"float16 subnormal rounds up to normal", Float16Bits, 0x3ff8p-28, 0x0400},
		{"float16 underflows to +0", Float16Bits, 0x1p-26, 0x0000},
		{"float16 underflows to -0", Float16Bits, -0x1p-26, 0x8000},
		{"float16 of a float32 subnormal", Float16Bits, 0x1p-140, 0x0000},
		{"float16 of -0", Float16Bits, float32(math.Copysign(0, -1)), 0x8000},
		{"float16 of a signalling NaN", Float16Bits, math.Float32frombits(0x7f800001), 0x7e00},
		{"bfloat16 of float32 max", BFloat16Bits, math.MaxFloat32, 0x7f80},
		{"bfloat16 of -float32 max", BFloat16Bits, -math.MaxFloat32, 0xff80},
		{"bfloat16 of a float32 subnormal", BFloat16Bits, 0x1p-130, 0x0008},
		{"bfloat16 underflow of a float32 subnormal", BFloat16Bits, 0x1p-140, 0x0000},
		{"bfloat16 of the smallest float32", BFloat16Bits, 0x1p-149, 0x0000},
		{"bfloat16 of a signalling NaN", BFloat16Bits, math.Float32frombits(0x7f800001), 0x7fc0},
		{"bfloat16 of a NaN whose payload is in the low bits", BFloat16Bits, math.Float32frombits(0xffc00001), 0xffc0},
		{"bfloat16 of 1/3", BFloat16Bits, 1.0 / 3, 0x3eab},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.bits(tc.in); got != tc.want {
				t.Fatalf("bits(%v) = %#04x, want %#04x", tc.in, got, tc.want)
			}
		})
	}
}
