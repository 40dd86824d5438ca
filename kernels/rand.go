package kernels

import (
	"fmt"
	"math"

	"github.com/gluaproject/glua/device"
)

// Rand fills x with uniform values in [0, 1). It is counter-based: element
// i depends only on (seed, offset + i), so the GPU kernel, with one thread
// per element and no state, produces the same bits, and a generator that
// hands out offsets in turn (the runtime's) draws a fresh part of one
// stream with each call. The CUDA version must match this exactly:
//
//	golden = 0x9E3779B97F4A7C15
//	h      = mix64(seed*golden + offset + i) // i: flat element index, 0-based; all uint64, wrapping
//	mix64(z): z ^= z>>30; z *= 0xBF58476D1CE4E5B9
//	          z ^= z>>27; z *= 0x94D049BB133111EB
//	          z ^= z>>31                     // splitmix64's finalizer
//
//	float64:  (h>>11) · 2^-53
//	float32:  (h>>40) · 2^-24
//	float16:  (h>>53) · 2^-11
//	bfloat16: (h>>56) · 2^-8
//
// Each value is an integer with as many bits as the dtype's significand,
// scaled by a power of two, so it is exact in its dtype and no rounding step
// can differ between implementations; the largest is 1 - 2^-p, never 1.
// Check value: seed 1, offset 0, index 0 gives h = 0xE220A8397B1DCDAF, the
// first output of Vigna's splitmix64 seeded with 0.
//
// Integer dtypes have no natural uniform [0, 1) and are an error, as is a
// buffer that is not a whole number of elements.
func Rand(dt device.DType, x []byte, seed, offset uint64) error {
	if err := checkRand("rand", dt, x); err != nil {
		return err
	}
	var bits uint // of dt's significand
	switch dt {
	case device.Float64:
		bits = 53
	case device.Float32:
		bits = 24
	case device.Float16:
		bits = 11
	default:
		bits = 8
	}
	scale := math.Ldexp(1, -int(bits))
	fillCounters(dt, x, seed*golden+offset, func(c uint64) float64 {
		return float64(mix64(c)>>(64-bits)) * scale // exact, and so in dt
	})
	return nil
}

// fillCounters sets element i of x to value(base + i), rounded to dt:
// through float32 for the 2-byte floats, as the CUDA kernels round.
func fillCounters(dt device.DType, x []byte, base uint64, value func(c uint64) float64) {
	switch dt {
	case device.Float64:
		xs, flush := view[float64](x)
		for i := range xs {
			xs[i] = value(base + uint64(i))
		}
		flush()
	case device.Float32:
		xs, flush := view[float32](x)
		for i := range xs {
			xs[i] = float32(value(base + uint64(i)))
		}
		flush()
	case device.Float16, device.BFloat16:
		store := device.Float16Bits
		if dt == device.BFloat16 {
			store = device.BFloat16Bits
		}
		xs, flush := view[uint16](x)
		for i := range xs {
			xs[i] = store(float32(value(base + uint64(i))))
		}
		flush()
	}
}

// checkRand refuses what the generators cannot fill.
func checkRand(name string, dt device.DType, x []byte) error {
	if !dt.IsFloat() {
		return fmt.Errorf("%s: %s is not supported (float32, float64, float16, bfloat16)", name, dt)
	}
	if len(x)%dt.Size() != 0 {
		return fmt.Errorf("%s: %d bytes is not a whole number of %s elements", name, len(x), dt)
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
