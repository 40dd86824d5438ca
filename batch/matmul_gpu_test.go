package batch_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/gluaproject/glua/batch"
	"github.com/gluaproject/glua/runtime"
)

// On the GPU, where C's tiles come down on their own stream while the next
// tile's products overwrite the device's buffer, every plan (one tile,
// rows of whole-row tiles, square tiles whose last column is narrower
// than the next row's first, square panels) gives the in-core cuBLAS
// product, with the tiles coming down whole and in blocks of rows.
func TestMatmulTilesComeDownRightOnTheGPU(t *testing.T) {
	rt := newCUDA(t)
	for _, split := range []bool{false, true} {
		if split {
			defer batch.SplitEveryTile()()
		}
		for _, c := range []struct {
			shape  [3]int
			budget uint64
		}{
			{[3]int{1000, 1500, 700}, 0},       // one tile
			{[3]int{1003, 1500, 700}, 4900000}, // rows of whole-row tiles, B in panels, the last row shorter
			{[3]int{517, 300, 1333}, 1100000},  // square tiles, the last column narrower
			{[3]int{64, 64, 64}, 1000},         // square panels
			{[3]int{2100, 64, 2100}, 5500000},  // a product of 17 MiB, whose pages are asked for ahead
		} {
			m, k, n := c.shape[0], c.shape[1], c.shape[2]
			shape, budget := c.shape, c.budget
			A, B := randomMatrix(t, rt, m, k, runtime.Float32), randomMatrix(t, rt, k, n, runtime.Float32)
			want := inCore(t, rt, A, B)
			scale := 0.0
			for _, v := range want {
				scale = math.Max(scale, math.Abs(v))
			}
			{
				var plan bytes.Buffer
				C, err := batch.Matmul(rt, A, B, batch.MatmulOptions{Budget: budget, Verbose: &plan})
				if err != nil {
					t.Fatalf("%v budget %d (blocks %v): %v", shape, budget, split, err)
				}
				for i, v := range C.Floats() {
					if math.Abs(v-want[i]) > 1e-5*scale {
						t.Fatalf("%v budget %d (blocks %v, %s): element %d (row %d) is %v, want %v",
							shape, budget, split, plan.String(), i, i/n, v, want[i])
					}
				}
			}
		}
	}
	if live := rt.LiveArrays(); live != 0 {
		t.Fatalf("%d arrays live after the products", live)
	}
}

// inCore is A·B by cuBLAS with everything on the device, as float64s.
func inCore(t *testing.T, rt *runtime.Runtime, A, B *runtime.HostArray) []float64 {
	t.Helper()
	m, k, n := A.Shape()[0], A.Shape()[1], B.Shape()[1]
	dA, errA := rt.DeviceArray([]int{m, k}, runtime.Float32)
	dB, errB := rt.DeviceArray([]int{k, n}, runtime.Float32)
	dC, errC := rt.DeviceArray([]int{m, n}, runtime.Float32)
	for _, err := range []error{errA, errB, errC} {
		if err != nil {
			t.Fatal(err)
		}
	}
	defer func() { dA.Free(); dB.Free(); dC.Free() }()
	if err := dA.CopyFrom(A); err != nil {
		t.Fatal(err)
	}
	if err := dB.CopyFrom(B); err != nil {
		t.Fatal(err)
	}
	if err := rt.Matmul(dC, dA, dB, runtime.MatmulOptions{}); err != nil {
		t.Fatal(err)
	}
	h, err := dC.CopyToHost(nil)
	if err != nil {
		t.Fatal(err)
	}
	return h.Floats()
}

// On the GPU too, a product with a zero dimension is NumPy's: empty, or
// zeros where only the inner dimension is 0.
func TestMatmulWithAZeroDimensionIsNumPysOnTheGPU(t *testing.T) {
	testEmptyProducts(t, newCUDA(t))
}
