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
