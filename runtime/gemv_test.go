package runtime_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// A 1-D operand of Matmul is a vector: y = alpha·op(M)·x + beta·y with x
// on the right, y = alpha·x·op(M) + beta·y with x on the left.
func TestMatmulWithAVectorMatchesReference(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	tol := map[device.DType]float64{runtime.Float32: 1e-5, runtime.Float64: 1e-12, runtime.Float16: 1e-2, runtime.BFloat16: 1e-2}
	for dt := range tol {
		for _, trans := range []bool{false, true} {
			for _, left := range []bool{false, true} {
				// M is stored rows×cols. y has m elements and x k: op(M)
				// is m×k on the right and k×m on the left.
				rows, cols := 19, 11
				hm := randomHost(t, []int{rows, cols}, dt)
				m, k := rows, cols
				if trans != left {
					m, k = k, m
				}
				hx, hy := randomHost(t, []int{k}, dt), randomHost(t, []int{m}, dt)
				M, _ := rt.ToDevice(hm)
				x, _ := rt.ToDevice(hx)
				y, _ := rt.ToDevice(hy)
				o := runtime.MatmulOptions{Alpha: 1.5, AlphaSet: true, Beta: -0.5, TransA: trans && !left, TransB: trans && left}
				var err error
				if left {
					err = rt.Matmul(y, x, M, o)
				} else {
					err = rt.Matmul(y, M, x, o)
				}
				what := fmt.Sprintf("%s trans=%t left=%t", dt, trans, left)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				got, _ := y.Float64s()
				mv, xv, yv := hm.Floats(), hx.Floats(), hy.Floats()
				// at is M's element that multiplies x[j] into y[i]:
				// op(M)[i][j] on the right, op(M)[j][i] on the left.
				at := func(i, j int) float64 {
					if trans != left {
						return mv[j*cols+i]
					}
					return mv[i*cols+j]
				}
				var num, den float64
				for i := range m {
					s := 0.0
					for j := range k {
						s += at(i, j) * xv[j]
					}
					want := 1.5*s - 0.5*yv[i]
					num += (got[i] - want) * (got[i] - want)
					den += want * want
				}
				if rel := math.Sqrt(num / den); !(rel < tol[dt]) {
					t.Errorf("%s: relative error %g", what, rel)
				}
			}
		}
	}
}
