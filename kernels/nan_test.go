package kernels_test

import (
	"math"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
)

// A float64 operation's NaN is its last NaN operand's, quieted, sign and
// all, or the NaN made from numbers; float32 arithmetic has one NaN.
func TestArithmeticNaNsAreTheGPUs(t *testing.T) {
	nan := func(b uint64) float64 { return math.Float64frombits(b) }
	for _, c := range []struct {
		a, b uint64
		want uint64
	}{
		{0xfffd000000000000, 0x3ff0000000000000, 0xfffd000000000000},
		{0x3ff0000000000000, 0x7ff0000000000001, 0x7ff8000000000001}, // a signalling NaN comes out quiet
		{0xfff8000000000000, 0x7ffa400000000000, 0x7ffa400000000000},
		{0x7ff0000000000000, 0x7ff0000000000000, 0xfff8000000000000}, // no NaN operand: ∞−∞
	} {
		if got := math.Float64bits(kernels.ArithNaN64(nan(c.a), nan(c.b))); got != c.want {
			t.Errorf("ArithNaN64(%#x, %#x) = %#x, want %#x", c.a, c.b, got, c.want)
		}
	}
	if b := math.Float32bits(kernels.ArithNaN32); b != 0x7fffffff {
		t.Errorf("ArithNaN32 is %#x", b)
	}

	// y - x, y / x and maximum on one element each
	apply := func(name string, dt device.DType, y, x float64) uint64 {
		yb, xb := make([]byte, dt.Size()), make([]byte, dt.Size())
		device.Set(dt, yb, 0, y)
		device.Set(dt, xb, 0, x)
		kernels.LookupElementwise(name).Apply(dt, yb, 0, xb)
		var bits uint64
		for k := dt.Size() - 1; k >= 0; k-- {
			bits = bits<<8 | uint64(yb[k])
		}
		return bits
	}
	negNaN := nan(0xfffd000000000000)
	for _, c := range []struct {
		name string
		dt   device.DType
		y, x float64
		want uint64
	}{
		{"sub", device.Float32, negNaN, 1, 0x7fffffff},
		{"div", device.Float32, 0, 0, 0x7fffffff},
		{"sub", device.Float16, negNaN, 1, uint64(device.Float16Bits(kernels.ArithNaN32))},
		{"sub", device.Float64, 1, negNaN, 0xfffd000000000000}, // not negated
		{"div", device.Float64, negNaN, nan(0x7ffa400000000000), 0x7ffa400000000000},
		{"maximum", device.Float32, 1, negNaN, 0xffe80000}, // a selection keeps the bits
	} {
		if got := apply(c.name, c.dt, c.y, c.x); got != c.want {
			t.Errorf("%s %s of %v and %v: %#x, want %#x", c.name, c.dt, c.y, c.x, got, c.want)
		}
	}
}
