package device

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSetThenGetReturnsTheStoredValue(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("random seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, d := range DTypes {
		b := make([]byte, 64*d.Size())
		for i := 0; i < 64; i++ {
			var v float64
			switch d {
			case Float64:
				v = rng.NormFloat64() * 1e10
			case Float32:
				v = float64(float32(rng.NormFloat64() * 1e10))
			case Float16:
				v = float64(Float16Value(uint16(rng.IntN(0x7c00)) | uint16(rng.IntN(2))<<15))
			case BFloat16:
				v = float64(BFloat16Value(uint16(rng.IntN(0x7f80)) | uint16(rng.IntN(2))<<15))
			case Int32:
				v = float64(int32(rng.Uint32()))
			case Int64:
				v = float64(int64(rng.Uint64()) >> 11) // exact in float64
			case Uint8:
				v = float64(rng.IntN(256))
			}
			Set(d, b, i, v)
			if got := Get(d, b, i); got != v {
				t.Fatalf("%s: Set %v then Get = %v", d, v, got)
			}
		}
	}
}

func TestSetOfAnIntegerTruncatesAndSaturates(t *testing.T) {
	for _, tc := range []struct {
		d    DType
		in   float64
		want float64
	}{
		{Int32, 2.9, 2},
		{Int32, -2.9, -2},
		{Int32, 3e9, math.MaxInt32},
		{Int32, -3e9, math.MinInt32},
		{Int32, math.MaxInt32 + 0.5, math.MaxInt32},
		{Int32, math.Inf(-1), math.MinInt32},
		{Int32, math.NaN(), 0},
		{Int64, 1e19, math.MaxInt64},
		{Int64, -1e19, math.MinInt64},
		{Int64, math.Inf(1), math.MaxInt64},
		{Int64, math.NaN(), 0},
		{Uint8, 255.9, 255},
		{Uint8, 256, 255},
		{Uint8, -0.5, 0},
		{Uint8, -300, 0},
		{Uint8, math.NaN(), 0},
	} {
		b := make([]byte, tc.d.Size())
		Set(tc.d, b, 0, tc.in)
		if got := Get(tc.d, b, 0); got != tc.want {
			t.Errorf("%s: Set(%v) stores %v, want %v", tc.d, tc.in, got, tc.want)
		}
	}
}

func TestSetIsLittleEndianAtTheElementIndex(t *testing.T) {
	b := make([]byte, 12)
	Set(Int32, b, 1, 0x01020304)
	want := []byte{0, 0, 0, 0, 4, 3, 2, 1, 0, 0, 0, 0}
	if string(b) != string(want) {
		t.Fatalf("Set(int32, index 1, 0x01020304) wrote % x, want % x", b, want)
	}
}

func TestCheckValueRefusesWhatAnIntegerDTypeCannotHold(t *testing.T) {
	for _, c := range []struct {
		d    DType
		v    float64
		want string // "" when v is accepted
	}{
		{Uint8, 255.99, ""},
		{Uint8, -0.99, ""},
		{Uint8, 256, "256 is out of uint8's range, 0 to 255"},
		{Uint8, -1, "-1 is out of uint8's range, 0 to 255"},
		{Int32, -2147483648.5, ""},
		{Int32, 2147483647.5, ""},
		{Int32, 2147483648, "2147483648 is out of int32's range, -2147483648 to 2147483647"},
		{Int32, 1e10, "10000000000 is out of int32's range, -2147483648 to 2147483647"},
		{Int64, -0x1p63, ""},
		{Int64, 0x1p63 - 1024, ""},
		{Int64, 0x1p63, "9.2233720368548e+18 is out of int64's range, -2^63 to 2^63 - 1"},
		{Int64, math.Inf(1), "inf is out of int64's range, -2^63 to 2^63 - 1"},
		{Int32, math.NaN(), "nan has no int32 value"},
		{Float16, 1e6, ""},
		{Float32, math.NaN(), ""},
		{BFloat16, math.Inf(-1), ""},
	} {
		err := CheckValue(c.d, c.v)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckValue(%s, %v): %v, want nil", c.d, c.v, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("CheckValue(%s, %v): %v, want %q", c.d, c.v, err, c.want)
		}
	}
}
