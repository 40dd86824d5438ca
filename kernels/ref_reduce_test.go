package kernels

import (
	"fmt"
	"math"
	"testing"

	"github.com/gluaproject/glua/device"
)

func TestReductionsMatchAFloat64Loop(t *testing.T) {
	rng := newRand(t)
	for _, dt := range device.DTypes {
		for _, n := range []int{1, 5, 1000, 10007} {
			for _, unaligned := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/n=%d/unaligned=%t", dt, n, unaligned), func(t *testing.T) {
					x := randomArray(rng, dt, n, unaligned)
					y := randomArray(rng, dt, n, !unaligned)
					xs, ys := load(dt, x), load(dt, y)
					var sum, abs, sq, worst float64
					for i, v := range xs {
						sum += v
						abs += math.Abs(v)
						sq += v * v
						worst = math.Max(worst, math.Abs(v-ys[i]))
					}
					// Elements are exact in float64, so only the float64
					// accumulation rounds, whatever the dtype.
					if got := Sum(dt, x); math.Abs(got-sum) > 1e-13*abs {
						t.Errorf("Sum = %v, want %v", got, sum)
					}
					if got, want := Norm(dt, x), math.Sqrt(sq); math.Abs(got-want) > 1e-13*want {
						t.Errorf("Norm = %v, want %v", got, want)
					}
					if got := MaxAbsDiff(dt, x, y); got != worst {
						t.Errorf("MaxAbsDiff = %v, want %v", got, worst)
					}
					if got := MaxAbsDiff(dt, x, x); got != 0 {
						t.Errorf("MaxAbsDiff(x, x) = %v, want 0", got)
					}
				})
			}
		}
	}
}

func TestMaxAbsDiffPropagatesNaNFromAnywhere(t *testing.T) {
	rng := newRand(t)
	for _, dt := range []device.DType{device.Float32, device.Float64, device.Float16, device.BFloat16} {
		for _, tc := range []struct {
			name string
			at   int
			inX  bool
		}{{"first of x", 0, true}, {"last of y", 99, false}, {"middle of x", 50, true}} {
			t.Run(fmt.Sprintf("%s/%s", dt, tc.name), func(t *testing.T) {
				x := randomArray(rng, dt, 100, false)
				y := append([]byte(nil), x...)
				// A large difference after the NaN must not hide it.
				device.Set(dt, y, (tc.at+1)%100, 1e4)
				if tc.inX {
					device.Set(dt, x, tc.at, math.NaN())
				} else {
					device.Set(dt, y, tc.at, math.NaN())
				}
				if got := MaxAbsDiff(dt, x, y); !math.IsNaN(got) {
					t.Fatalf("MaxAbsDiff with a NaN = %v, want NaN", got)
				}
			})
		}
	}
}

func TestMaxAbsDiffOfInfinities(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		x, y float64
		want float64
	}{
		{inf, inf, 0},
		{-inf, -inf, 0},
		{inf, -inf, inf},
		{inf, 1, inf},
	} {
		x, y := make([]byte, 4), make([]byte, 4)
		device.Set(device.Float32, x, 0, tc.x)
		device.Set(device.Float32, y, 0, tc.y)
		if got := MaxAbsDiff(device.Float32, x, y); got != tc.want {
			t.Errorf("MaxAbsDiff(%v, %v) = %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}
}

func TestSumAndNormOfNaNAreNaN(t *testing.T) {
	for _, dt := range []device.DType{device.Float32, device.Float64, device.Float16, device.BFloat16} {
		x := make([]byte, 3*dt.Size())
		device.Set(dt, x, 0, 1)
		device.Set(dt, x, 1, math.NaN())
		device.Set(dt, x, 2, 2)
		if s, n := Sum(dt, x), Norm(dt, x); !math.IsNaN(s) || !math.IsNaN(n) {
			t.Errorf("%s: Sum, Norm with a NaN = %v, %v", dt, s, n)
		}
	}
}
