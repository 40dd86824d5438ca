package jit

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/numpytest"
)

// integerStores are kernels of (out, i) that store an integer expression
// into an element of another type. want is the element as the language
// defines it: the expression computed in int64 (wrapping as NumPy's), then
// converted once, at the store; cuda is the line of CUDA C that shows the
// work done in long long before the conversion.
var integerStores = []struct {
	name string
	body string
	out  device.DType
	i    int64
	want float64
	cuda string
}{
	{"the issue's (i * i) % 7 into float32", `out[1] = (i * i) % 7`, device.Float32, 5001, 2,
		"p_out[((1LL) - 1)] = (float)(lua_mod(wrap_mul(l0_i, l0_i), (7LL)));"},
	{"the issue's (i * i + 1) - i * i into float32", `out[1] = (i * i + 1) - i * i`, device.Float32, 5001, 1,
		"(float)(wrap_sub(wrap_add(wrap_mul(l0_i, l0_i), (1LL)), wrap_mul(l0_i, l0_i)))"},
	{"the issue's (i * i) % 7 into float64 past 2^53", `out[1] = (i * i) % 7`, device.Float64, 100000001, 2,
		"(double)(lua_mod(wrap_mul(l0_i, l0_i), (7LL)))"},
	{"the issue's (i * i + 1) - i * i into float64 past 2^53", `out[1] = (i * i + 1) - i * i`, device.Float64, 100000001, 1,
		"(double)(wrap_sub(wrap_add(wrap_mul(l0_i, l0_i), (1LL)), wrap_mul(l0_i, l0_i)))"},
	{"into float16", `out[1] = (i * i) % 7`, device.Float16, 5001, 2,
		"f32_to_f16((float)(lua_mod(wrap_mul(l0_i, l0_i), (7LL))))"},
	{"through an integer local", "local v = i * i\nout[1] = v % 7", device.Float32, 5001, 2,
		"(float)(lua_mod(l1_v, (7LL)))"},
	{"assigned to a float local", "local s = 0.0\ns = (i * i) % 7\nout[1] = s", device.Float32, 5001, 2,
		"l1_s = ((float)lua_mod(wrap_mul(l0_i, l0_i), (7LL)));"},
	{"math.abs of an integer expression", `out[1] = math.abs(i * i - 25010000)`, device.Float32, 5001, 1,
		"(float)(lua_abs(wrap_sub(wrap_mul(l0_i, l0_i), (25010000LL))))"},
	{"math.max of an integer expression and a literal", `out[1] = math.max(i * i, 3) - 25010000`, device.Float32, 5001, 1,
		"(float)(wrap_sub(lua_max(wrap_mul(l0_i, l0_i), (3LL)), (25010000LL)))"},
	{"math.floor's argument does not take the store's type", `out[1] = math.floor(i * i / 1) - 25010000`, device.Float32, 5001, 1,
		"floor((double)(((double)wrap_mul(l0_i, l0_i)) / (1e+00)))"},
	{"a comparison with a float literal is exact", "if i * i == 25010000.0 then out[1] = 1 else out[1] = 2 end", device.Float32, 5001, 2,
		"if ((((double)wrap_mul(l0_i, l0_i)) == (2.501e+07))) {"},
	{"a float literal beside an integer expression", `out[1] = (i * i) % 7 + 0.5`, device.Float32, 5001, 2.5,
		"(float)((((float)lua_mod(wrap_mul(l0_i, l0_i), (7LL))) + (5e-01f)))"},
	{"atomic_add of an integer expression into float32", `kernels.atomic_add(out, 1, (i * i) % 7)`, device.Float32, 5001, 2,
		"atomicAdd(&p_out[((1LL) - 1)], (float)(lua_mod(wrap_mul(l0_i, l0_i), (7LL))));"},
	{"int64 products wrap as NumPy's", `out[1] = (i * i) % 1000`, device.Int64, 3037000500, 384,
		"(i64)(lua_mod(wrap_mul(l0_i, l0_i), (1000LL)))"},
	{"negation wraps", `out[1] = -(i * i) % 1000`, device.Int64, 3037000500, 616,
		"lua_mod(wrap_neg(wrap_mul(l0_i, l0_i)), (1000LL))"},
	{"a wrapped product stored into int32 wraps again", `out[1] = i * i`, device.Int32, 3037000500, 145474192,
		"(int)(wrap_mul(l0_i, l0_i))"},
	{"% takes the divisor's sign", `out[1] = (i * i) % -7`, device.Float32, 5001, -5,
		"lua_mod(wrap_mul(l0_i, l0_i), (-7LL))"},
	{"an integer rounds to float32 once", `out[1] = i * i + 68719476737`, device.Float32, 1 << 30,
		float64(float32(int64(1<<60 + 1<<36 + 1))), "(float)(wrap_add(wrap_mul(l0_i, l0_i), (68719476737LL)))"},
	{"int / int is float64 division", `out[1] = i / 2`, device.Float32, 5001, 2500.5,
		"(float)((((double)l0_i) / (2e+00)))"},
}

// TestIntegerExpressionsAreInt64WhereverTheyAreStored runs each kernel on
// the evaluator and reads its CUDA C: both compute the integer
// expression in long long, whatever the element's type.
func TestIntegerExpressionsAreInt64WhereverTheyAreStored(t *testing.T) {
	if got := float64(float32(int64(1<<60 + 1<<36 + 1))); got == float64(float32(float64(1<<60+1<<36+1))) {
		t.Fatalf("the rounding case does not tell one rounding from two: %v", got)
	}
	for _, tc := range integerStores {
		t.Run(tc.name, func(t *testing.T) {
			p := mustTranslate(t, "return function(out, i)\n"+tc.body+"\nend", Signature{arr(tc.out, 1), intArg}, Options{})
			out := HostArray{DType: tc.out, Shape: []int{1}, Data: make([]byte, tc.out.Size())}
			if err := Run(p, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []any{out, float64(tc.i)}); err != nil {
				t.Fatal(err)
			}
			if got := element(out, 0); got != tc.want {
				t.Errorf("the evaluator stores %v, want %v", got, tc.want)
			}
			containsAll(t, CUDA(p), []string{tc.cuda})
		})
	}
}

// mapIntegerOps are map functions of two int64 arrays, each with the
// NumPy expression that computes the same out (x, y int64 arrays).
var mapIntegerOps = []struct {
	src   string
	out   device.DType
	numpy string
}{
	{"return x * y", device.Int64, "x * y"},
	{"return x + y", device.Int64, "x + y"},
	{"return x - y", device.Int64, "x - y"},
	{"return -x", device.Int64, "-x"},
	{"return x % y", device.Int64, "np.mod(x, y)"},
	{"return (x * y) % 1000", device.Int64, "np.mod(x * y, 1000)"},
	{"return math.abs(x)", device.Int64, "np.abs(x)"},
	{"return math.max(x, y) - math.min(x, y)", device.Int64, "np.maximum(x, y) - np.minimum(x, y)"},
	{"return x / y", device.Float64, "x / y"},
	{"return x * y", device.Float32, "(x * y).astype(np.float32)"},
	{"return x * y", device.Float64, "(x * y).astype(np.float64)"},
	{"return x * y", device.Int32, "(x * y).astype(np.int32)"},
	{"return (x * y) % 7 + 0.5", device.Float32, "(np.mod(x * y, 7) + np.float32(0.5)).astype(np.float32)"},
}

// int64sNearTheLimits are n int64 values, most near ±2^63 or ±√2^63 (where
// products wrap), some small, never 0 (they are divisors too).
func int64sNearTheLimits(r *rand.Rand, n int) []int64 {
	v := make([]int64, n)
	for i := range v {
		switch i % 5 {
		case 0:
			v[i] = math.MaxInt64 - r.Int63n(1000)
		case 1:
			v[i] = math.MinInt64 + r.Int63n(1000)
		case 2:
			v[i] = 3037000500 + r.Int63n(2000) - 1000
		case 3:
			v[i] = r.Int63n(2001) - 1000
		default:
			v[i] = r.Int63() - r.Int63()
		}
		if r.Intn(2) == 0 && i%5 == 2 {
			v[i] = -v[i]
		}
		if v[i] == 0 {
			v[i] = -1
		}
	}
	return v
}

// TestMapIntegerElementsComputeAsNumPyDoes runs map functions of int64
// arrays near the limits on the evaluator and compares each result's
// bytes with NumPy's: products wrap, % is floored, / is float64, and an
// integer converts to float32 with one rounding.
func TestMapIntegerElementsComputeAsNumPyDoes(t *testing.T) {
	const n = 500
	r := rand.New(rand.NewSource(29))
	xs, ys := int64sNearTheLimits(r, n), int64sNearTheLimits(r, n)
	ys[0], xs[0] = -1, math.MinInt64 // the least int64 % -1, and -(least), abs(least)
	x := HostArray{DType: device.Int64, Shape: []int{n}, Data: make([]byte, n*8)}
	y := HostArray{DType: device.Int64, Shape: []int{n}, Data: make([]byte, n*8)}
	var xText, yText []string
	for i := range xs {
		storeInt(device.Int64, x.Data, i, xs[i])
		storeInt(device.Int64, y.Data, i, ys[i])
		xText, yText = append(xText, fmt.Sprint(xs[i])), append(yText, fmt.Sprint(ys[i]))
	}
	var exprs []string
	for _, op := range mapIntegerOps {
		exprs = append(exprs, op.numpy)
	}
	const script = `
import sys
import numpy as np
x = np.array([int(v) for v in sys.argv[1].split(",")], dtype=np.int64)
y = np.array([int(v) for v in sys.argv[2].split(",")], dtype=np.int64)
with np.errstate(all="ignore"):
    for e in sys.argv[3].split(";"):
        print(eval(e).tobytes().hex())
`
	want := strings.Fields(numpytest.Run(t, script, strings.Join(xText, ","), strings.Join(yText, ","), strings.Join(exprs, ";")))
	if len(want) != len(mapIntegerOps) {
		t.Fatalf("NumPy printed %d results for %d expressions", len(want), len(mapIntegerOps))
	}
	for k, op := range mapIntegerOps {
		t.Run(fmt.Sprintf("%s into %s", op.src, op.out), func(t *testing.T) {
			p, err := checkMap(t, "return function(x, y) "+op.src+" end", Signature{arr(device.Int64, 1), arr(device.Int64, 1)}, op.out)
			if err != nil {
				t.Fatal(err)
			}
			out := HostArray{DType: op.out, Shape: []int{n}, Data: make([]byte, n*op.out.Size())}
			if err := Run(p, [3]int{2, 1, 1}, [3]int{64, 1, 1}, []any{out, x, y}); err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(out.Data); got != want[k] {
				for i := 0; i < n; i++ {
					w, _ := hex.DecodeString(want[k][2*i*op.out.Size() : 2*(i+1)*op.out.Size()])
					wantElem := element(HostArray{DType: op.out, Shape: []int{1}, Data: w}, 0)
					if g := element(out, i); g != wantElem {
						t.Fatalf("element %d (x = %d, y = %d): the evaluator gives %v, NumPy %v", i+1, xs[i], ys[i], g, wantElem)
					}
				}
			}
		})
	}
}
