package kernels

import (
	"math"

	"github.com/gluaproject/glua/device"
)

// Sum is the sum of x's elements, accumulated in float64.
func Sum(dt device.DType, x []byte) float64 {
	return accumulate("Sum", dt, x, false)
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
// where the values are equal, infinities included.
func MaxAbsDiff(dt device.DType, x, y []byte) float64 {
	n := same("MaxAbsDiff", dt, x, y)
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
	default:
		for i := 0; i < n; i++ {
			d.add(device.Get(dt, x, i), device.Get(dt, y, i))
		}
	}
	if d.nan {
		return math.NaN()
	}
	return d.worst
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
