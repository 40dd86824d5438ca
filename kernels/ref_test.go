package kernels

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

// newRand draws a fresh seed for every run and logs it, so a failure can be
// replayed by pasting the seed.
func newRand(t testing.TB) *rand.Rand {
	seed := rand.Uint64()
	t.Logf("random seed %d", seed)
	return rand.New(rand.NewPCG(seed, 0x676c7561))
}

// randomArray returns n elements of dt with varied signs and magnitudes, so
// that rounding, not just exact small integers, is exercised. When unaligned
// is set the slice starts one byte into its buffer, which is what a
// misaligned host buffer handed to a kernel looks like.
func randomArray(rng *rand.Rand, dt device.DType, n int, unaligned bool) []byte {
	off := 0
	if unaligned {
		off = 1
	}
	b := make([]byte, n*dt.Size()+off)[off:]
	for i := 0; i < n; i++ {
		var v float64
		switch dt {
		case device.Uint8:
			v = float64(rng.IntN(256))
		case device.Int32, device.Int64:
			v = float64(rng.IntN(2_000_001) - 1_000_000)
		default:
			v = (rng.Float64()*2 - 1) * math.Pow(2, float64(rng.IntN(9)-4))
		}
		device.Set(dt, b, i, v)
	}
	return b
}

func load(dt device.DType, b []byte) []float64 {
	v := make([]float64, len(b)/dt.Size())
	for i := range v {
		v[i] = device.Get(dt, b, i)
	}
	return v
}

// unitRoundoff is the relative error of one rounding to nearest in dt.
var unitRoundoff = map[device.DType]float64{
	device.Float64:  0x1p-53,
	device.Float32:  0x1p-24,
	device.Float16:  0x1p-11,
	device.BFloat16: 0x1p-8,
}

// smallestStep bounds the absolute error of a result that lands among dt's
// subnormals.
var smallestStep = map[device.DType]float64{
	device.Float64:  0x1p-1074,
	device.Float32:  0x1p-149,
	device.Float16:  0x1p-24,
	device.BFloat16: 0x1p-133,
}

// storeInt is what storing v in an integer dtype must give: truncation
// toward zero, saturation at the type's range, 0 for NaN. Written out here
// rather than taken from device.Set, so that the test checks the rule.
func storeInt(dt device.DType, v float64) float64 {
	lo, hi := map[device.DType][2]float64{
		device.Int32: {math.MinInt32, math.MaxInt32},
		device.Int64: {math.MinInt64, math.MaxInt64},
		device.Uint8: {0, 255},
	}[dt][0], map[device.DType][2]float64{
		device.Int32: {math.MinInt32, math.MaxInt32},
		device.Int64: {math.MinInt64, math.MaxInt64},
		device.Uint8: {0, 255},
	}[dt][1]
	switch {
	case math.IsNaN(v):
		return 0
	case v <= lo:
		return lo
	case v >= hi:
		return hi
	}
	return math.Trunc(v)
}

// checkClose compares got with the exact want; scale is the magnitude of the
// terms that were rounded. float32 arithmetic rounds at most three times
// (the scalar, the product, the sum); the 2-byte types add one rounding on
// store, which dominates.
func checkClose(t *testing.T, dt device.DType, what string, got, want, scale []float64) {
	t.Helper()
	for i := range want {
		if !dt.IsFloat() {
			if w := storeInt(dt, want[i]); got[i] != w {
				t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], w)
			}
			continue
		}
		if got[i] == want[i] {
			continue // infinities included
		}
		tol := 3*unitRoundoff[dt]*scale[i] + smallestStep[dt]
		if d := math.Abs(got[i] - want[i]); !(d <= tol) {
			t.Fatalf("%s[%d] = %v, want %v (error %g, allowed %g)", what, i, got[i], want[i], d, tol)
		}
	}
}

// elementwise lists each in-place kernel with its exact float64 meaning.
var elementwise = []struct {
	name  string
	run   func(dt device.DType, y []byte, a float64, x []byte)
	want  func(y, a, x float64) float64
	scale func(y, a, x float64) float64
}{
	{"Fill",
		func(dt device.DType, y []byte, a float64, _ []byte) { Fill(dt, y, a) },
		func(_, a, _ float64) float64 { return a },
		func(_, a, _ float64) float64 { return math.Abs(a) }},
	{"Scale",
		func(dt device.DType, y []byte, a float64, _ []byte) { Scale(dt, y, a) },
		func(y, a, _ float64) float64 { return a * y },
		func(y, a, _ float64) float64 { return math.Abs(a * y) }},
	{"Axpy",
		func(dt device.DType, y []byte, a float64, x []byte) { Axpy(dt, y, a, x) },
		func(y, a, x float64) float64 { return a*x + y },
		func(y, a, x float64) float64 { return math.Abs(a*x) + math.Abs(y) }},
	{"Add",
		func(dt device.DType, y []byte, _ float64, x []byte) { Add(dt, y, x) },
		func(y, _, x float64) float64 { return y + x },
		func(y, _, x float64) float64 { return math.Abs(y) + math.Abs(x) }},
	{"Mul",
		func(dt device.DType, y []byte, _ float64, x []byte) { Mul(dt, y, x) },
		func(y, _, x float64) float64 { return y * x },
		func(y, _, x float64) float64 { return math.Abs(y * x) }},
}

// TestElementwiseKernelsMatchAFloat64Loop holds the float dtypes to a
// float64 loop, and Fill on the integer dtypes to its conversion rule; the
// integer dtypes' arithmetic is held to NumPy's
// (TestIntegerKernelsMatchNumPyNearTheLimits).
func TestElementwiseKernelsMatchAFloat64Loop(t *testing.T) {
	rng := newRand(t)
	for _, op := range elementwise {
		for _, dt := range device.DTypes {
			if !dt.IsFloat() && op.name != "Fill" {
				continue
			}
			for _, n := range []int{0, 1, 7, 1000, 4099} {
				for _, unaligned := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/%s/n=%d/unaligned=%t", op.name, dt, n, unaligned), func(t *testing.T) {
						y := randomArray(rng, dt, n, unaligned)
						x := randomArray(rng, dt, n, !unaligned)
						a := (rng.Float64()*2 - 1) * 3
						if !dt.IsFloat() {
							a *= 1e10 // reach the integer types' saturation too
						}
						y0, x0 := load(dt, y), load(dt, x)
						op.run(dt, y, a, x)
						want, scale := make([]float64, n), make([]float64, n)
						for i := range want {
							want[i] = op.want(y0[i], a, x0[i])
							scale[i] = op.scale(y0[i], a, x0[i])
						}
						checkClose(t, dt, "y", load(dt, y), want, scale)
						if got := load(dt, x); fmt.Sprint(got) != fmt.Sprint(x0) {
							t.Fatalf("%s changed its input x", op.name)
						}
					})
				}
			}
		}
	}
}

func TestCopyConvertsBetweenEveryPairOfDTypes(t *testing.T) {
	rng := newRand(t)
	for _, src := range device.DTypes {
		for _, dst := range device.DTypes {
			t.Run(fmt.Sprintf("%s_to_%s", src, dst), func(t *testing.T) {
				const n = 777
				s := randomArray(rng, src, n, false)
				d := randomArray(rng, dst, n, src == dst)
				Copy(dst, d, src, s)
				want := load(src, s)
				scale := make([]float64, n)
				for i, v := range want {
					scale[i] = math.Abs(v) / 3 // one rounding only
					if dst == device.Float16 && math.Abs(v) >= 65520 {
						want[i] = math.Inf(int(math.Copysign(1, v))) // rounds past float16's largest, 65504
					}
				}
				checkClose(t, dst, "dst", load(dst, d), want, scale)
			})
		}
	}
}

// The documented rules are exact, so the GPU kernels can be held to them bit
// for bit; these tests pin the ones a looser implementation would miss.
func TestFloat32AxpyRoundsAlphaThenTheProductThenTheSum(t *testing.T) {
	rng := newRand(t)
	const n = 4096
	y := randomArray(rng, device.Float32, n, false)
	x := randomArray(rng, device.Float32, n, false)
	y0, x0 := load(device.Float32, y), load(device.Float32, x)
	a := 0.1 // not a float32: rounding it first is observable
	Axpy(device.Float32, y, a, x)
	for i := 0; i < n; i++ {
		p := float32(a) * float32(x0[i])
		want := p + float32(y0[i])
		if got := float32(device.Get(device.Float32, y, i)); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("y[%d] = %v, want %v = float32(a)*x rounded, plus y", i, got, want)
		}
	}
}

func TestHalfKernelsComputeInFloat32AndRoundOnce(t *testing.T) {
	rng := newRand(t)
	const n = 4096
	for _, dt := range []device.DType{device.Float16, device.BFloat16} {
		load16, store16 := halfCodec(dt)
		y := randomArray(rng, dt, n, false)
		x := randomArray(rng, dt, n, false)
		h := func(b []byte, i int) float32 { return load16(uint16(b[2*i]) | uint16(b[2*i+1])<<8) }
		y0 := append([]byte(nil), y...)
		a := 1.0 / 3
		Axpy(dt, y, a, x)
		for i := 0; i < n; i++ {
			p := float32(a) * h(x, i)
			want := store16(p + h(y0, i))
			if got := uint16(y[2*i]) | uint16(y[2*i+1])<<8; got != want {
				t.Fatalf("%s: y[%d] bits %#04x, want %#04x", dt, i, got, want)
			}
		}
	}
}

func ints(dt device.DType, vs ...float64) []byte {
	b := make([]byte, len(vs)*dt.Size())
	for i, v := range vs {
		device.Set(dt, b, i, v)
	}
	return b
}

func TestConversionsToIntegersTruncateAndSaturate(t *testing.T) {
	for _, tc := range []struct {
		name string
		dt   device.DType
		run  func(y []byte)
		y    []float64
		want []float64
	}{
		{"fill uint8 above range", device.Uint8, func(y []byte) { Fill(device.Uint8, y, 300) }, []float64{1, 2}, []float64{255, 255}},
		{"fill uint8 negative", device.Uint8, func(y []byte) { Fill(device.Uint8, y, -5) }, []float64{1}, []float64{0}},
		{"fill int32 huge", device.Int32, func(y []byte) { Fill(device.Int32, y, 1e12) }, []float64{0, 0, 0}, []float64{math.MaxInt32, math.MaxInt32, math.MaxInt32}},
		{"fill int32 NaN", device.Int32, func(y []byte) { Fill(device.Int32, y, math.NaN()) }, []float64{7}, []float64{0}},
		{"fill int32 truncates toward zero", device.Int32, func(y []byte) { Fill(device.Int32, y, -2.7) }, []float64{7}, []float64{-2}},
		{"fill int64 beyond range", device.Int64, func(y []byte) { Fill(device.Int64, y, -1e30) }, []float64{7}, []float64{math.MinInt64}},
		{"copy float32 to int32", device.Int32, func(y []byte) {
			src := make([]byte, 16)
			for i, v := range []float64{3.7, -3.7, math.NaN(), 1e20} {
				device.Set(device.Float32, src, i, v)
			}
			Copy(device.Int32, y, device.Float32, src)
		}, []float64{9, 9, 9, 9}, []float64{3, -3, 0, math.MaxInt32}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := ints(tc.dt, tc.y...)
			tc.run(y)
			if got := load(tc.dt, y); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// Integer arithmetic wraps modulo 2^bits, as NumPy's and PyTorch's does;
// the examples first.
func TestIntegerArithmeticWrapsAround(t *testing.T) {
	for _, tc := range []struct {
		name string
		dt   device.DType
		run  func(y []byte)
		y    []float64
		want []int64
	}{
		{"int64 (x + 1) - x is 1 beyond 2^53", device.Int64, func(y []byte) {
			x := bytes.Clone(y)
			Scale(device.Int64, y, 1)
			LookupElementwise("add_scalar").Apply(device.Int64, y, 1, nil)
			LookupElementwise("sub").Apply(device.Int64, y, 0, x)
		}, []float64{0x1p53 + 2, -0x1p60}, []int64{1, 1}},
		{"-uint8(1) is 255", device.Uint8, func(y []byte) { Scale(device.Uint8, y, -1) }, []float64{1, 0, 200}, []int64{255, 0, 56}},
		{"uint8 - 1 wraps below 0", device.Uint8, func(y []byte) { LookupElementwise("add_scalar").Apply(device.Uint8, y, -1, nil) }, []float64{0, 5}, []int64{255, 4}},
		{"scale uint8 wraps past 255", device.Uint8, func(y []byte) { Scale(device.Uint8, y, 2) }, []float64{200, 100}, []int64{144, 200}},
		{"add int32 wraps", device.Int32, func(y []byte) { Add(device.Int32, y, ints(device.Int32, 1, -1)) }, []float64{math.MaxInt32, math.MinInt32}, []int64{math.MinInt32, math.MaxInt32}},
		{"mul int32 wraps", device.Int32, func(y []byte) { Mul(device.Int32, y, ints(device.Int32, 70000)) }, []float64{-70000}, []int64{-605032704}},
		{"axpy uint8 wraps below 0", device.Uint8, func(y []byte) { Axpy(device.Uint8, y, -1, ints(device.Uint8, 20, 5)) }, []float64{10, 10}, []int64{246, 5}},
		{"int32's smallest negates to itself", device.Int32, func(y []byte) { Scale(device.Int32, y, -1) }, []float64{math.MinInt32, -5}, []int64{math.MinInt32, 5}},
		{"a number wraps into int32", device.Int32, func(y []byte) { Scale(device.Int32, y, 1<<32+3) }, []float64{5}, []int64{15}},
		{"maximum compares uint8 unsigned", device.Uint8, func(y []byte) { LookupElementwise("maximum").Apply(device.Uint8, y, 0, ints(device.Uint8, 200, 3)) }, []float64{100, 255}, []int64{200, 255}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := ints(tc.dt, tc.y...)
			tc.run(y)
			for i, w := range tc.want {
				if g := intAt(tc.dt, y, i); g != w {
					t.Fatalf("[%d] = %d, want %d", i, g, w)
				}
			}
		})
	}
}

func TestCopyToAHalfTypeOverflowsToInfinityAndKeepsNaN(t *testing.T) {
	src := make([]byte, 4*8)
	for i, v := range []float64{1e6, -1e6, math.NaN(), 65504} {
		device.Set(device.Float64, src, i, v)
	}
	dst := make([]byte, 4*2)
	Copy(device.Float16, dst, device.Float64, src)
	got := load(device.Float16, dst)
	if !math.IsInf(got[0], 1) || !math.IsInf(got[1], -1) || !math.IsNaN(got[2]) || got[3] != 65504 {
		t.Fatalf("float64 -> float16 of [1e6 -1e6 NaN 65504] = %v", got)
	}
}

func TestSameDTypeCopyKeepsBitsExactly(t *testing.T) {
	src := []byte{0x01, 0x00, 0xc0, 0x7f, 0xff, 0xff, 0xff, 0xff} // NaN with payload, then a negative NaN
	dst := make([]byte, len(src))
	Copy(device.Float32, dst, device.Float32, src)
	if string(dst) != string(src) {
		t.Fatalf("Copy float32 -> float32 changed bits: % x", dst)
	}
}

func TestEmptyArraysAreHarmless(t *testing.T) {
	for _, dt := range device.DTypes {
		var e []byte
		Fill(dt, e, 1)
		Scale(dt, e, 2)
		Axpy(dt, e, 2, e)
		Add(dt, e, e)
		Mul(dt, e, e)
		Copy(dt, e, device.Float32, e)
		if s, n, d := Sum(dt, e), Norm(dt, e), MaxAbsDiff(dt, e, e); s != 0 || n != 0 || d != 0 {
			t.Fatalf("%s: Sum, Norm, MaxAbsDiff of empty = %v, %v, %v; want 0, 0, 0", dt, s, n, d)
		}
	}
}

func TestMisuseNamesTheKernelAndTheProblem(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func()
		want string
	}{
		{"lengths differ", func() { Add(device.Float32, make([]byte, 8), make([]byte, 12)) }, "kernels.Add: operands have 2 and 3 elements"},
		{"partial element", func() { Sum(device.Float32, make([]byte, 6)) }, "kernels.Sum: 6 bytes is not a whole number of float32 elements"},
		{"invalid dtype", func() { Fill(device.Invalid, nil, 0) }, "kernels.Fill: invalid dtype"},
		{"copy counts differ", func() { Copy(device.Float64, make([]byte, 8), device.Float32, make([]byte, 8)) }, "kernels.Copy:"},
		{"max abs diff lengths", func() { MaxAbsDiff(device.Float16, make([]byte, 2), nil) }, "kernels.MaxAbsDiff:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, tc.want) {
					t.Fatalf("panic %v, want one containing %q", r, tc.want)
				}
			}()
			tc.call()
		})
	}
}
