package kernels

import (
	"math"

	"github.com/gluaproject/glua/device"
)

// Sum is the sum of x's elements: accumulated in float64 for the float
// dtypes; for the integer dtypes in int64, wrapping as NumPy's sum does,
// and rounded to float64 once at the end.
func Sum(dt device.DType, x []byte) float64 {
	count("Sum", dt, x)
	switch dt {
	case device.Int32:
		return float64(sumInts[int32](x))
	case device.Int64:
		return float64(sumInts[int64](x))
	case device.Uint8:
		return float64(sumInts[uint8](x))
	}
	return accumulate("Sum", dt, x, false)
}

// sumInts is the sum of integer elements modulo 2^64, exact whatever the
// order, as int64.
func sumInts[S intCompute](x []byte) int64 {
	xs, _ := view[S](x)
	var s int64
	for _, v := range xs {
		s += int64(v)
	}
	return s
}

// Norm is the Euclidean norm of x, accumulated in float64. It is not guarded
// against overflow of the squares: float64 holds the square of any float32.
func Norm(dt device.DType, x []byte) float64 {
	return math.Sqrt(accumulate("Norm", dt, x, true))
}

func accumulate(op string, dt device.DType, x []byte, square bool) float64 {
	n := count(op, dt, x)
	switch dt {
	case device.Float64:
		xs, _ := view[float64](x)
		return sumOf(xs, square)
	case device.Float32:
		xs, _ := view[float32](x)
		return sumOf(xs, square)
	}
	var s float64
	if dt.IsHalf() {
		xs, _ := view[uint16](x)
		load, _ := halfCodec(dt)
		for _, h := range xs {
			v := float64(load(h))
			if square {
				v *= v
			}
			s += v
		}
		return s
	}
	for i := 0; i < n; i++ {
		v := device.Get(dt, x, i)
		if square {
			v *= v
		}
		s += v
	}
	return s
}

func sumOf[T float32 | float64](xs []T, square bool) float64 {
	var s float64
	if square {
		for _, v := range xs {
			s += float64(v) * float64(v)
		}
		return s
	}
	for _, v := range xs {
		s += float64(v)
	}
	return s
}

// MaxAbsDiff is the largest |x[i] - y[i]|: NaN if either holds a NaN, and 0
// where the values are equal, infinities included. Integers differ
// exactly: the largest difference, up to 2^64 - 1, is rounded to float64
// once.
func MaxAbsDiff(dt device.DType, x, y []byte) float64 {
	same("MaxAbsDiff", dt, x, y)
	var d maxDiff
	switch dt {
	case device.Float64:
		xs, _ := view[float64](x)
		ys, _ := view[float64](y)
		for i, a := range xs {
			d.add(a, ys[i])
		}
	case device.Float32:
		xs, _ := view[float32](x)
		ys, _ := view[float32](y)
		for i, a := range xs {
			d.add(float64(a), float64(ys[i]))
		}
	case device.Float16, device.BFloat16:
		xs, _ := view[uint16](x)
		ys, _ := view[uint16](y)
		load, _ := halfCodec(dt)
		for i, a := range xs {
			d.add(float64(load(a)), float64(load(ys[i])))
		}
	case device.Int32:
		return maxAbsDiffInts[int32](x, y)
	case device.Int64:
		return maxAbsDiffInts[int64](x, y)
	case device.Uint8:
		return maxAbsDiffInts[uint8](x, y)
	}
	if d.nan {
		return math.NaN()
	}
	return d.worst
}

// maxAbsDiffInts is MaxAbsDiff of integer elements, each difference
// taken in uint64, where it always fits.
func maxAbsDiffInts[S intCompute](x, y []byte) float64 {
	xs, _ := view[S](x)
	ys, _ := view[S](y)
	ys = ys[:len(xs)]
	var worst uint64
	for i, a := range xs {
		worst = max(worst, absDiff(int64(a), int64(ys[i])))
	}
	return float64(worst)
}

// absDiff is |a - b| exactly: the difference of two int64s wraps in
// uint64 to its true value, which is below 2^64.
func absDiff(a, b int64) uint64 {
	if a >= b {
		return uint64(a) - uint64(b)
	}
	return uint64(b) - uint64(a)
}

// maxDiff tracks NaN apart from the maximum because a comparison with NaN is
// false and would drop it (as fmax does on the GPU).
type maxDiff struct {
	worst float64
	nan   bool
}

func (m *maxDiff) add(a, b float64) {
	if a == b {
		return
	}
	d := math.Abs(a - b)
	if d != d {
		m.nan = true
	} else if d > m.worst {
		m.worst = d
	}
}
