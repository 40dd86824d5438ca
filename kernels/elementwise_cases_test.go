package kernels_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
)

var nan, inf, negZero = math.NaN(), math.Inf(1), math.Copysign(0, -1)

// elementwiseCases are the documented rules for the values where kernels
// differ from plain arithmetic: NaN, signed zeros, division by zero and
// the integer dtypes' truncation and saturation. Both backends must give
// exactly these.
var elementwiseCases = []struct {
	op      string
	dt      device.DType
	y, x, w []float64 // w: y after y = op(y, x)
}{
	{"maximum", device.Float32,
		[]float64{nan, 1, 2, negZero, 0, inf, -inf, -3},
		[]float64{1, nan, nan, 0, negZero, nan, 5, -4},
		[]float64{nan, nan, nan, negZero, 0, nan, 5, -3}},
	{"minimum", device.Float32,
		[]float64{nan, 1, 2, negZero, 0, -inf, inf, -3},
		[]float64{1, nan, nan, 0, negZero, nan, 5, -4},
		[]float64{nan, nan, nan, negZero, 0, nan, 5, -4}},
	{"maximum", device.Float64, []float64{1, nan}, []float64{nan, 1}, []float64{nan, nan}},
	{"minimum", device.Float16, []float64{1, nan, 3}, []float64{nan, 1, 2}, []float64{nan, nan, 2}},
	{"maximum", device.BFloat16, []float64{1, nan, 3}, []float64{nan, 1, 2}, []float64{nan, nan, 3}},
	{"maximum", device.Int32, []float64{-7, 7, math.MinInt32}, []float64{3, 3, math.MaxInt32}, []float64{3, 7, math.MaxInt32}},
	{"minimum", device.Uint8, []float64{0, 255, 9}, []float64{255, 0, 8}, []float64{0, 0, 8}},
	{"div", device.Float32, []float64{1, -1, 0, 6}, []float64{0, 0, 0, negZero}, []float64{inf, -inf, nan, -inf}},
	{"div", device.Int32,
		[]float64{7, -7, 7, -7, 0, 5, -5, math.MinInt32},
		[]float64{2, 2, -2, -2, 0, 0, 0, -1},
		[]float64{3, -3, -3, 3, 0, math.MaxInt32, math.MinInt32, math.MaxInt32}},
	{"div", device.Int64, []float64{7, -7, 1 << 40}, []float64{2, 0, 3}, []float64{3, math.MinInt64, 366503875925}},
	{"div", device.Uint8, []float64{7, 200, 0, 9}, []float64{2, 0, 0, 10}, []float64{3, 255, 0, 0}},
	{"sub", device.Uint8, []float64{3, 200}, []float64{5, 100}, []float64{0, 100}},
	{"sub", device.Int32, []float64{math.MinInt32, 5}, []float64{1, -7}, []float64{math.MinInt32, 12}},
	{"sub", device.Float16, []float64{1, 65504}, []float64{1, -65504}, []float64{0, inf}},
}

func elementsOf(dt device.DType, v []float64) []byte {
	b := make([]byte, len(v)*dt.Size())
	for i, f := range v {
		device.Set(dt, b, i, f)
	}
	return b
}

// checkCases runs every case through run, which sets y = op(y, x), and
// compares what it printed: fmt shows -0 and NaN as themselves.
func checkCases(t *testing.T, run func(op *kernels.ElementwiseOp, dt device.DType, y, x []byte) []byte) {
	for _, c := range elementwiseCases {
		op := kernels.LookupElementwise(c.op)
		got := run(op, c.dt, elementsOf(c.dt, c.y), elementsOf(c.dt, c.x))
		gotV := make([]float64, len(c.y))
		for i := range gotV {
			gotV[i] = device.Get(c.dt, got, i)
		}
		if fmt.Sprint(gotV) != fmt.Sprint(c.w) {
			t.Errorf("%s %s of %v and %v: %v, want %v", c.op, c.dt, c.y, c.x, gotV, c.w)
		}
	}
}

func TestElementwiseKernelsFollowTheRulesForNaNZerosAndIntegers(t *testing.T) {
	checkCases(t, func(op *kernels.ElementwiseOp, dt device.DType, y, x []byte) []byte {
		op.Apply(dt, y, 0, x)
		return y
	})
}

func TestGPUElementwiseKernelsFollowTheRulesForNaNZerosAndIntegers(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	checkCases(t, func(op *kernels.ElementwiseOp, dt device.DType, y, x []byte) []byte {
		yd, xd := place(t, b, y, 0), place(t, b, x, 0)
		if err := g.Elementwise(op, dt, yd.ptr(), 0, xd.ptr(), len(y)/dt.Size(), 0); err != nil {
			t.Fatalf("%s %s: %v", op.Name, dt, err)
		}
		return yd.read(t, op.Name+" "+dt.String())
	})
}
