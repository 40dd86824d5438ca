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
	{"math.floor's argument does not take the store's type", `out[1] = math.floor(i * i / 3) - 8336666`, device.Float32, 5001, 1,
		"floor((double)(((double)wrap_mul(l0_i, l0_i)) / (3e+00)))"},
	{"a comparison with a float literal is exact", "if i * i == 25010000.0 then out[1] = 1 else out[1] = 2 end", device.Float32, 5001, 2,
		"if ((((double)wrap_mul(l0_i, l0_i)) == (2.501e+07))) {"},
	{"a float literal beside an integer expression", `out[1] = (i * i) % 7 + 0.5`, device.Float32, 5001, 2.5,
		"(float)((((float)lua_mod(wrap_mul(l0_i, l0_i), (7LL))) + (5e-01f)))"},
	{"atomic_add of an integer expression into float32", `kernels.atomic_add(out, 1, (i * i) % 7)`, device.Float32, 5001, 2,
		"glua_atomic_add(&p_out[((1LL) - 1)], (float)(lua_mod(wrap_mul(l0_i, l0_i), (7LL))));"},
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
			if len(p.Traps) != 0 {
				t.Errorf("%% by a nonzero literal has traps: %v", p.Traps)
			}
			containsAll(t, CUDA(p), []string{tc.cuda})
		})
	}
}

// modZero is a kernel whose divisor is n, an integer argument.
const modZero = `return function(out, i, n)
	out[1] = (i * i) % n
end`

func TestIntegerModuloByZeroIsAnErrorNamingTheOperationAndTheKernel(t *testing.T) {
	cases := []struct {
		name, src string
		o         Options
		want      string
	}{
		{"a divisor argument", modZero, Options{},
			"jit: kernel.lua:2: integer modulo by zero: the divisor of i * i % n is 0, in the kernel at kernel.lua:1"},
		{"a named kernel", modZero, Options{Name: "squares"},
			"jit: kernel.lua:2: integer modulo by zero: the divisor of i * i % n is 0, in the kernel squares at kernel.lua:1"},
		// the issue's -nan: a literal 0 took the float type of out
		{"a literal 0", "return function(out, i, n)\n\tout[1] = (i * i) % 0\nend", Options{},
			"jit: kernel.lua:2: integer modulo by zero: the divisor of i * i % 0 is 0, in the kernel at kernel.lua:1"},
		{"a local of a loop", "return function(out, i, n)\n\tlocal s = 0\n\tfor k = 3, -3, -1 do\n\t\ts = s + i % (k - n)\n\tend\n\tout[1] = s\nend", Options{},
			"jit: kernel.lua:4: integer modulo by zero: the divisor of i % (k - n) is 0, in the kernel at kernel.lua:1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustTranslate(t, tc.src, Signature{arr(device.Float32, 1), intArg, intArg}, tc.o)
			out := HostArray{DType: device.Float32, Shape: []int{1}, Data: make([]byte, 4)}
			err := Run(p, [3]int{2, 1, 1}, [3]int{32, 1, 1}, []any{out, 5001.0, 0.0})
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			src := CUDA(p)
			containsAll(t, src, []string{"i64* glua_err)", "bool glua_stop = false;", "lua_mod_checked(glua_err, glua_stop, 1, ", "if (glua_stop) return;"})
			if len(p.Traps) != 1 || p.Traps[0].Error() != tc.want {
				t.Errorf("traps %v", p.Traps)
			}
		})
	}
}

// A nonzero divisor gives Lua's value on the same kernel.
func TestIntegerModuloByAVariableFollowsLua(t *testing.T) {
	p := mustTranslate(t, modZero, Signature{arr(device.Float32, 1), intArg, intArg}, Options{})
	for _, c := range []struct{ n, want float64 }{{7, 2}, {-7, -5}, {1, 0}, {-1, 0}} {
		out := HostArray{DType: device.Float32, Shape: []int{1}, Data: make([]byte, 4)}
		if err := Run(p, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []any{out, 5001.0, c.n}); err != nil {
			t.Fatal(err)
		}
		if got := element(out, 0); got != c.want {
			t.Errorf("(5001 * 5001) %% %v = %v, want %v", c.n, got, c.want)
		}
	}
}

// The device reports a trap in the record's first slot with the value the
// runtime reads as RecordTrap, and an index out of bounds as RecordBounds.
func TestPreludeRecordsWhatTheRuntimeReads(t *testing.T) {
	for kind, head := range map[int]string{RecordBounds: "inline bool glua_in_bounds(", RecordTrap: "inline i64 lua_mod_checked("} {
		body := prelude[strings.Index(prelude, head):]
		body = body[:strings.Index(body, "\n}")]
		if want := fmt.Sprintf("atomicCAS((u64*)err, 0ull, %dull) == 0ull", kind); !strings.Contains(body, want) {
			t.Errorf("%s... does not record %d:\n%s", head, kind, body)
		}
	}
}

// A map function's trap names the map function, an op function's the op.
func TestMapAndOpFunctionTrapsNameTheirFunction(t *testing.T) {
	f := mustParseMap(t, "return function(x, n)\n\treturn x % n\nend", "kernel.lua")
	x := HostArray{DType: device.Int64, Shape: []int{300}, Data: make([]byte, 300*8)}
	for i := 0; i < 300; i++ {
		storeInt(device.Int64, x.Data, i, int64(i))
	}
	sig := Signature{arr(device.Int64, 1), intArg}
	mapWant := "jit: kernel.lua:2: integer modulo by zero: the divisor of x % n is 0, in the map function at kernel.lua:1"

	p, err := CheckMap(f, sig, device.Float32, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := HostArray{DType: device.Float32, Shape: []int{300}, Data: make([]byte, 300*4)}
	if err := Run(p, [3]int{2, 1, 1}, [3]int{256, 1, 1}, []any{out, x, 0.0}); err == nil || err.Error() != mapWant {
		t.Errorf("map: error %v, want %q", err, mapWant)
	}
	if err := Run(p, [3]int{2, 1, 1}, [3]int{256, 1, 1}, []any{out, x, 7.0}); err != nil || element(out, 299) != 299%7 {
		t.Errorf("map by 7: %v, out[300] = %v", err, element(out, 299))
	}

	first, err := CheckMapReduce(f, sig, Reduction{Name: "sum"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunMapReduce(first, ReducePartials(first, Reduction{Name: "sum"}), 300, []any{x, 0.0}); err == nil || err.Error() != mapWant {
		t.Errorf("map_reduce: error %v, want %q", err, mapWant)
	}

	res := HostArray{DType: device.Int64, Shape: []int{3}, Data: make([]byte, 3*8)}
	if err := runAxis(t, f, sig, Reduction{Name: "max"}, 3, 100, 2, res, []any{x, 0.0}); err == nil || err.Error() != mapWant {
		t.Errorf("axis: error %v, want %q", err, mapWant)
	}

	id := mustParseMap(t, "return function(x) return x end", "kernel.lua")
	op := mustParseMap(t, "return function(a, b)\n\treturn a % b\nend", "op.lua")
	red := Reduction{Fn: op}
	first, err = CheckMapReduce(id, Signature{arr(device.Int64, 1)}, red, Options{})
	if err != nil {
		t.Fatal(err)
	}
	second := ReducePartials(first, red)
	opWant := "jit: op.lua:2: integer modulo by zero: the divisor of a % b is 0, in the op function at op.lua:1"
	zeros := HostArray{DType: device.Int64, Shape: []int{300}, Data: make([]byte, 300*8)}
	if _, err := RunMapReduce(first, second, 300, []any{zeros}); err == nil || err.Error() != opWant {
		t.Errorf("op: error %v, want %q", err, opWant)
	}
	for _, p := range []*Program{first, second} {
		containsAll(t, CUDA(p), []string{
			"i64 glua_map_fn_op(i64 l0_a, i64 l1_b, i64* glua_err, bool& glua_stop) {",
			"return lua_mod_checked(glua_err, glua_stop, 1, l0_a, l1_b);",
			", glua_err, glua_stop)",
			"i64* glua_err)",
		})
	}
}

// In CUDA C an op function's statements stop at a trap as the kernel's do: a
// loop in it must not run on with a value of 0.
func TestOpFunctionsCUDAStopsAtATrap(t *testing.T) {
	op := mustParseMap(t, "return function(a, b)\n\tlocal r = a\n\twhile r % b == 0 do r = r + 1 end\n\treturn r\nend", "op.lua")
	id := mustParseMap(t, "return function(x) return x end", "kernel.lua")
	first, err := CheckMapReduce(id, Signature{arr(device.Int64, 1)}, Reduction{Fn: op}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	containsAll(t, CUDA(first), []string{"while ((lua_mod_checked(glua_err, glua_stop, 1, l2_r, l1_b) == (0LL))) {\n        if (glua_stop) return 0;"})
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

// math.floor and math.ceil of a float give an int64 or stop the kernel
// where none holds the value; an integer over a constant above 1 in
// magnitude always fits, and needs no check.
func TestFloorOfAFloatIsCheckedUnlessItAlwaysFits(t *testing.T) {
	for _, c := range []struct {
		expr    string
		checked bool
	}{
		{"math.floor(x[1])", true},
		{"math.ceil(x[1] * 2)", true},
		{"math.floor(i / 1)", true}, // an int64 near 2^63 is 2^63 as a float64
		{"math.floor(i / n)", true},
		{"math.floor(1e300 / 2)", true},
		{"math.floor(i / 2)", false},
		{"math.ceil(i / -2.5)", false},
		{"math.floor(7 / 2)", false},
		{"math.floor(i)", false},
	} {
		src := "return function(out, x, i, n)\n\tout[1] = " + c.expr + "\nend"
		p := mustTranslate(t, src, Signature{arr(device.Int64, 1), arr(device.Float64, 1), intArg, intArg}, Options{})
		if got := len(p.Traps) > 0; got != c.checked {
			t.Errorf("%s: checked %v, want %v", c.expr, got, c.checked)
		}
	}
	p := mustTranslate(t, "return function(out, x)\n\tout[1] = math.floor(x[1])\nend", Signature{arr(device.Int64, 1), arr(device.Float64, 1)}, Options{})
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0x1p63, -0x1p64} {
		x := newArray(device.Float64, 1)
		storeFloat(device.Float64, x.Data, 0, v)
		err := Run(p, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []any{newArray(device.Int64, 1), x})
		if want := "jit: kernel.lua:2: math.floor(x[1]) has no int64 value (its argument is NaN, an infinity or beyond 2^63 in magnitude), in the kernel at kernel.lua:1"; err == nil || err.Error() != want {
			t.Errorf("floor(%v): %v, want %q", v, err, want)
		}
	}
	for _, v := range []float64{-0x1p63, 0x1p63 - 1024, -2.5} {
		x, out := newArray(device.Float64, 1), newArray(device.Int64, 1)
		storeFloat(device.Float64, x.Data, 0, v)
		if err := Run(p, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []any{out, x}); err != nil {
			t.Fatal(err)
		}
		if got := element(out, 0); got != math.Floor(v) {
			t.Errorf("floor(%v) = %v", v, got)
		}
	}
}
