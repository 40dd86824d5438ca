package kernels

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
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

// kernelOrderSum is reduce.cu's float sum simulated thread by thread, as
// the comment at its top tells it, over terms already squared where a
// norm squares them: a second reading of the order, written apart from
// blockedSum's one pass over the array.
func kernelOrderSum(terms []float64, lanes int) float64 {
	n := len(terms)
	blocks := reduceBlocks(n)
	vectors := (n + lanes - 1) / lanes
	perBlock := (vectors + blocks - 1) / blocks
	partials := make([]float64, blocks)
	for b := range blocks {
		start, end := b*perBlock, min(vectors, (b+1)*perBlock)
		s := make([]float64, reduceThreads)
		for t := range reduceThreads {
			acc := make([]float64, reduceAccumulators)
			k := 0
			for j := start + t; j < end; j += reduceThreads {
				for i := j * lanes; i < min(n, (j+1)*lanes); i++ {
					acc[k%reduceAccumulators] += terms[i]
				}
				k++
			}
			for _, a := range acc[1:] {
				acc[0] += a
			}
			s[t] = acc[0]
		}
		for w := reduceThreads / 2; w > 0; w /= 2 {
			for t := range w {
				s[t] += s[t+w]
			}
		}
		partials[b] = s[0]
	}
	f := make([]float64, reduceFinishThreads)
	for t := range f {
		for i := t; i < blocks; i += reduceFinishThreads {
			f[t] += partials[i]
		}
	}
	for w := reduceFinishThreads / 2; w > 0; w /= 2 {
		for t := range w {
			f[t] += f[t+w]
		}
	}
	return f[0]
}

// The GPU's sums are only reproducible on the CPU backend if the reference
// adds in the kernels' order to the last bit; sizes straddle a vector, a
// row of a block's threads, a block's share and the largest grid.
func TestSumAndNormAddInTheGPUKernelsOrder(t *testing.T) {
	rng := newRand(t)
	for _, dt := range device.DTypes {
		lanes := 16 / dt.Size()
		sizes := []int{1, 2, lanes - 1, lanes + 1, 3 * lanes, reduceThreads*lanes - 1, reduceThreads*lanes + 1,
			reducePerBlock - 1, reducePerBlock, reducePerBlock + 1, 3*reducePerBlock + 5, 1<<20 + 3}
		if dt == device.Float32 {
			sizes = append(sizes, reducePerBlock*reduceMaxBlocks+lanes+1) // every block full, one more vector
		}
		for _, n := range sizes {
			if n < 1 {
				continue
			}
			x := randomArray(rng, dt, n, n%2 == 1)
			// A float32 sum in float64 is exact unless its terms span
			// more than about 29 binades: spread them over 120 (float16
			// over its few), so that another order would round
			// differently; float64's full mantissas round at once.
			spread := map[device.DType]int{device.Float64: 30, device.Float32: 60, device.BFloat16: 60, device.Float16: 6}[dt]
			for i := range n {
				if spread > 0 {
					device.Set(dt, x, i, device.Get(dt, x, i)*math.Pow(2, float64(rng.IntN(2*spread+1)-spread)))
				}
			}
			xs := load(dt, x)
			squares := make([]float64, n)
			for i, v := range xs {
				squares[i] = float64(v * v)
			}
			if dt.IsFloat() {
				if got, want := Sum(dt, x), kernelOrderSum(xs, lanes); math.Float64bits(got) != math.Float64bits(want) {
					t.Errorf("%s n=%d: Sum = %v, the kernels' order gives %v", dt, n, got, want)
				}
			}
			if got, want := Norm(dt, x), math.Sqrt(kernelOrderSum(squares, lanes)); math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("%s n=%d: Norm = %v, the kernels' order gives %v", dt, n, got, want)
			}
		}
	}
}

// reduce.cu and blockedSum must agree on the shape that fixes the order;
// the unroll (how many vectors a thread loads before adding) must be a
// multiple of the accumulators, or a round's u-th vector would not go to
// accumulator u % ACCS.
func TestReduceCUDAHasTheGoShape(t *testing.T) {
	src, err := cudaFiles.ReadFile("reduce.cu")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"GLUA_REDUCE_THREADS": reduceThreads, "GLUA_REDUCE_ACCS": reduceAccumulators,
		"GLUA_FINISH_THREADS": reduceFinishThreads}
	got := map[string]int{}
	for _, d := range regexp.MustCompile(`(?m)^#define (GLUA_\w+) (\d+)$`).FindAllStringSubmatch(string(src), -1) {
		got[d[1]], _ = strconv.Atoi(d[2])
	}
	for name, v := range want {
		if got[name] != v {
			t.Errorf("reduce.cu: %s is %d, the Go reference uses %d", name, got[name], v)
		}
	}
	if u := got["GLUA_REDUCE_UNROLL"]; u < 1 || u%reduceAccumulators != 0 {
		t.Errorf("reduce.cu: GLUA_REDUCE_UNROLL %d is not a multiple of GLUA_REDUCE_ACCS %d", u, reduceAccumulators)
	}
	if reduceThreads&(reduceThreads-1) != 0 || reduceFinishThreads&(reduceFinishThreads-1) != 0 {
		t.Errorf("the trees need powers of two: %d and %d threads", reduceThreads, reduceFinishThreads)
	}
}
