package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/gluaproject/glua/device"
)

func BenchmarkAxpyFloat32_1M(b *testing.B) {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	x := randomArray(rng, device.Float32, n, false)
	y := randomArray(rng, device.Float32, n, false)
	b.SetBytes(3 * 4 * n) // read x and y, write y
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Axpy(device.Float32, y, 1e-7, x)
	}
}

// BenchmarkRefElementwise times the CPU backend's elementwise kernels on
// 64Ki elements, small enough to stay in cache, so that the loops and
// not memory are measured: one kernel of each shape on every dtype. y is
// restored before each call, so that the values stay the same random ones
// (repeated adds would reach infinities, which convert at another speed).
func BenchmarkRefElementwise(b *testing.B) {
	const n = 1 << 16
	for _, k := range []struct {
		name string
		run  func(dt device.DType, y, x []byte)
	}{
		{"scale", func(dt device.DType, y, _ []byte) { Scale(dt, y, benchNumber(dt)) }},
		{"axpy", func(dt device.DType, y, x []byte) { Axpy(dt, y, benchNumber(dt), x) }},
		{"add", Add},
	} {
		for _, dt := range device.DTypes {
			b.Run(k.name+"/"+dt.String(), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				x := randomArray(rng, dt, n, false)
				y0 := randomArray(rng, dt, n, false)
				y := make([]byte, len(y0))
				b.SetBytes(int64(n * dt.Size()))
				for b.Loop() {
					copy(y, y0)
					k.run(dt, y, x)
				}
			})
		}
	}
}

// benchNumber is 1.5, or 3 for an integer dtype, whose kernels take
// integers.
func benchNumber(dt device.DType) float64 {
	if dt.IsFloat() {
		return 1.5
	}
	return 3
}
