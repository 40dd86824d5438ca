package runtime

import (
	"fmt"

	"github.com/gluaproject/glua/device"
)

// Rand allocates an array of uniform [0, 1) numbers generated on the
// device. With a seed, they are that seed's alone, the same on every
// backend and in every run: what the first unseeded call after Seed(seed)
// draws. Without one (nil), they are the next numbers of the runtime's
// generator, which New seeds afresh, so that every call and every run
// draws new numbers, as NumPy's and PyTorch's do; Seed makes the whole
// sequence repeat.
func (rt *Runtime) Rand(shape []int, dt device.DType, seed *uint64) (*Array, error) {
	return rt.random("rand", shape, dt, seed, rt.exec.rand)
}

// RandN is Rand with standard normal numbers (mean 0, variance 1). Rand
// and RandN draw from the one generator, each element taking one of its
// counters.
func (rt *Runtime) RandN(shape []int, dt device.DType, seed *uint64) (*Array, error) {
	return rt.random("randn", shape, dt, seed, rt.exec.randn)
}

// Seed resets the generator of unseeded Rand and RandN calls, so that the
// calls after it draw the same numbers in every run and on every backend.
func (rt *Runtime) Seed(seed uint64) {
	rt.rng.reset(seed)
}

func (rt *Runtime) random(name string, shape []int, dt device.DType, seed *uint64, fill func(x span, seed, offset uint64) error) (*Array, error) {
	if !dt.IsFloat() {
		return nil, fmt.Errorf("%s needs a float dtype, got %s", name, dt)
	}
	a, err := rt.DeviceArray(shape, dt)
	if err != nil || a.size == 0 {
		return a, err
	}
	s, offset := rt.rng.start(seed)
	if err := fill(a.span(), s, offset); err != nil {
		a.Free()
		return nil, err
	}
	if seed == nil {
		rt.rng.advance(uint64(a.size))
	}
	return a, nil
}
