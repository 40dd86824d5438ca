package kernels

import (
	"fmt"

	"github.com/gluaproject/glua/device"
)

// Rand fills x with uniform values in [0, 1). It is counter-based: element i
// depends only on (seed, i), so the GPU kernel, with one thread per element
// and no state, produces the same bits. The CUDA version must match this
// exactly:
//
//	golden = 0x9E3779B97F4A7C15
//	h      = mix64(seed*golden + i)        // i: flat element index, 0-based, uint64
//	mix64(z): z ^= z>>30; z *= 0xBF58476D1CE4E5B9
//	          z ^= z>>27; z *= 0x94D049BB133111EB
//	          z ^= z>>31                   // splitmix64's finalizer; all uint64, wrapping
//
//	float64:  (h>>11) · 2^-53
//	float32:  (h>>40) · 2^-24
//	float16:  (h>>53) · 2^-11
//	bfloat16: (h>>56) · 2^-8
//
// Each value is an integer with as many bits as the dtype's significand,
// scaled by a power of two, so it is exact in its dtype and no rounding step
// can differ between implementations; the largest is 1 - 2^-p, never 1.
// Check value: seed 1, index 0 gives h = 0xE220A8397B1DCDAF, the first
// output of Vigna's splitmix64 seeded with 0.
//
// Integer dtypes have no natural uniform [0, 1) and are an error, as is a
// buffer that is not a whole number of elements.
func Rand(dt device.DType, x []byte, seed uint64) error {
	if !dt.IsFloat() {
		return fmt.Errorf("rand: %s is not supported (float32, float64, float16, bfloat16)", dt)
	}
	if len(x)%dt.Size() != 0 {
		return fmt.Errorf("rand: %d bytes is not a whole number of %s elements", len(x), dt)
	}
	base := seed * golden
	switch dt {
	case device.Float64:
		xs, flush := view[float64](x)
		for i := range xs {
			xs[i] = float64(mix64(base+uint64(i))>>11) * 0x1p-53
		}
		flush()
	case device.Float32:
		xs, flush := view[float32](x)
		for i := range xs {
			xs[i] = float32(mix64(base+uint64(i))>>40) * 0x1p-24
		}
		flush()
	case device.Float16:
		xs, flush := view[uint16](x)
		for i := range xs {
			xs[i] = device.Float16Bits(float32(mix64(base+uint64(i))>>53) * 0x1p-11)
		}
		flush()
	case device.BFloat16:
		xs, flush := view[uint16](x)
		for i := range xs {
			xs[i] = device.BFloat16Bits(float32(mix64(base+uint64(i))>>56) * 0x1p-8)
		}
		flush()
	}
	return nil
}

const golden = 0x9E3779B97F4A7C15

// mix64 is splitmix64's output function: a bijection of uint64 whose every
// output bit depends on every input bit, which is what lets a plain counter
// stand in for a generator's state.
func mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xBF58476D1CE4E5B9
	z ^= z >> 27
	z *= 0x94D049BB133111EB
	z ^= z >> 31
	return z
}
