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
// differ from plain arithmetic: NaN, signed zeros, division by zero, and
// the integer dtypes' wrap-around, floor division and numbers taken
// modulo 2^bits. Both backends must give exactly these.
var elementwiseCases = []struct {
	op      string
	dt      device.DType
	y, x, w []float64 // w: y after y = op(y, x, a); x unused by one array
	a       float64
}{
	{"maximum", device.Float32,
		[]float64{nan, 1, 2, negZero, 0, inf, -inf, -3},
		[]float64{1, nan, nan, 0, negZero, nan, 5, -4},
		[]float64{nan, nan, nan, negZero, 0, nan, 5, -3}, 0},
	{"minimum", device.Float32,
		[]float64{nan, 1, 2, negZero, 0, -inf, inf, -3},
		[]float64{1, nan, nan, 0, negZero, nan, 5, -4},
		[]float64{nan, nan, nan, negZero, 0, nan, 5, -4}, 0},
	{"maximum", device.Float64, []float64{1, nan}, []float64{nan, 1}, []float64{nan, nan}, 0},
	{"minimum", device.Float16, []float64{1, nan, 3}, []float64{nan, 1, 2}, []float64{nan, nan, 2}, 0},
	{"maximum", device.BFloat16, []float64{1, nan, 3}, []float64{nan, 1, 2}, []float64{nan, nan, 3}, 0},
	{"maximum", device.Int32, []float64{-7, 7, math.MinInt32}, []float64{3, 3, math.MaxInt32}, []float64{3, 7, math.MaxInt32}, 0},
	{"minimum", device.Uint8, []float64{0, 255, 9}, []float64{255, 0, 8}, []float64{0, 0, 8}, 0},
	{"div", device.Float32, []float64{1, -1, 0, 6}, []float64{0, 0, 0, negZero}, []float64{inf, -inf, nan, -inf}, 0},
	{"div", device.Int32,
		[]float64{7, -7, 7, -7, 0, 5, -5, math.MinInt32},
		[]float64{2, 2, -2, -2, 0, 0, 0, -1},
		[]float64{3, -4, -4, 3, 0, 0, 0, math.MinInt32}, 0},
	{"div", device.Int64, []float64{7, -7, 1 << 40, math.MinInt64}, []float64{2, 0, 3, -1}, []float64{3, 0, 366503875925, math.MinInt64}, 0},
	{"div", device.Uint8, []float64{7, 200, 0, 9}, []float64{2, 0, 0, 10}, []float64{3, 0, 0, 0}, 0},
	{"sub", device.Uint8, []float64{3, 200}, []float64{5, 100}, []float64{254, 100}, 0},
	{"sub", device.Int32, []float64{math.MinInt32, 5}, []float64{1, -7}, []float64{math.MaxInt32, 12}, 0},
	{"mul", device.Int64, []float64{0x1p62, -3}, []float64{2, 0x1p62}, []float64{math.MinInt64, 0x1p62}, 0},
	{"sub", device.Float16, []float64{1, 65504}, []float64{1, -65504}, []float64{0, inf}, 0},
	{"rdiv", device.Float32, []float64{0, negZero, 2, inf, nan}, nil, []float64{inf, -inf, 0.5, 0, nan}, 1},
	{"rdiv", device.Int32, []float64{0, 3, -2}, nil, []float64{0, 2, -4}, 7},
	{"rdiv", device.Int32, []float64{0, 3}, nil, []float64{0, 0}, 0},
	{"rdiv", device.Int32, []float64{-1}, nil, []float64{math.MinInt32}, math.MinInt32},
	{"rsub", device.Float32, []float64{0, negZero, 1, inf}, nil, []float64{0, 0, -1, -inf}, 0},
	{"rsub", device.Uint8, []float64{3, 200, 0}, nil, []float64{2, 61, 5}, 5},
	{"rsub", device.Int32, []float64{math.MinInt32, 1}, nil, []float64{math.MaxInt32, -2}, -1},
	{"add_scalar", device.Float16, []float64{65504, 1, negZero}, nil, []float64{inf, 33, 32}, 32},
	{"add_scalar", device.Float32, []float64{negZero, 0}, nil, []float64{negZero, 0}, negZero},
	{"add_scalar", device.Uint8, []float64{250, 3}, nil, []float64{4, 13}, 10},
	{"add_scalar", device.Uint8, []float64{0, 3}, nil, []float64{255, 2}, -1},
	{"add_scalar", device.Int64, []float64{-7}, nil, []float64{-9}, -2},
	{"add_scalar", device.Int64, []float64{0x1p62}, nil, []float64{math.MinInt64}, 0x1p62},
	{"div_scalar", device.Int32, []float64{7, -7, 0}, nil, []float64{0, 0, 0}, 0},
	{"div_scalar", device.Int32, []float64{7, -7}, nil, []float64{3, -4}, 2},
	{"div_scalar", device.Uint8, []float64{254, 255}, nil, []float64{0, 1}, -1},
	{"scale", device.Uint8, []float64{1, 0, 200}, nil, []float64{255, 0, 56}, -1},
	{"scale", device.Int32, []float64{5}, nil, []float64{15}, 1<<32 + 3},
	{"div_scalar", device.Float64, []float64{1, 0}, nil, []float64{1.0 / 3, 0}, 3},
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
func checkCases(t *testing.T, run func(op *kernels.ElementwiseOp, dt device.DType, y, x []byte, a float64) []byte) {
	for _, c := range elementwiseCases {
		op := kernels.LookupElementwise(c.op)
		got := run(op, c.dt, elementsOf(c.dt, c.y), elementsOf(c.dt, c.x), c.a)
		gotV := make([]float64, len(c.y))
		for i := range gotV {
			gotV[i] = device.Get(c.dt, got, i)
		}
		if fmt.Sprint(gotV) != fmt.Sprint(c.w) {
			t.Errorf("%s %s of %v and %v, a=%v: %v, want %v", c.op, c.dt, c.y, c.x, c.a, gotV, c.w)
		}
	}
}

func TestElementwiseKernelsFollowTheRulesForNaNZerosAndIntegers(t *testing.T) {
	checkCases(t, func(op *kernels.ElementwiseOp, dt device.DType, y, x []byte, a float64) []byte {
		op.Apply(dt, y, a, x)
		return y
	})
}

func TestGPUElementwiseKernelsFollowTheRulesForNaNZerosAndIntegers(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	checkCases(t, func(op *kernels.ElementwiseOp, dt device.DType, y, x []byte, a float64) []byte {
		yd, xd := place(t, b, y, 0), place(t, b, x, 0)
		if err := g.Elementwise(op, dt, yd.ptr(), a, xd.ptr(), len(y)/dt.Size(), 0); err != nil {
			t.Fatalf("%s %s: %v", op.Name, dt, err)
		}
		return yd.read(t, op.Name+" "+dt.String())
	})
}
