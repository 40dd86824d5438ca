package jit

import (
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/internal/luatest"
)

// luaMath are the math library's functions as Lua 5.1 defines them
// (lmathlib.c calls C's function of the same name; deg and rad divide and
// multiply by pi/180), applied to a in (-1, 1) and b in [0.5, 4.5).
var luaMath = []struct {
	expr string
	// ref is Lua's value; r rounds the operations inside the arguments
	// as the kernel's type does (to float32, or not at all)
	ref func(a, b float64, r func(float64) float64) float64
}{
	{"math.abs(a)", func(a, b float64, r func(float64) float64) float64 { return math.Abs(a) }},
	{"math.acos(a)", func(a, b float64, r func(float64) float64) float64 { return lua51.Acos(a) }},
	{"math.asin(a)", func(a, b float64, r func(float64) float64) float64 { return lua51.Asin(a) }},
	{"math.atan(a * 8)", func(a, b float64, r func(float64) float64) float64 { return lua51.Atan(r(a * 8)) }},
	{"math.atan2(a, b - 2)", func(a, b float64, r func(float64) float64) float64 { return lua51.Atan2(a, r(b-2)) }},
	{"math.cos(b * 3)", func(a, b float64, r func(float64) float64) float64 { return lua51.Cos(r(b * 3)) }},
	{"math.cosh(b)", func(a, b float64, r func(float64) float64) float64 { return lua51.Cosh(b) }},
	{"math.deg(a)", func(a, b float64, r func(float64) float64) float64 { return a / r(math.Pi/180) }},
	{"math.exp(b)", func(a, b float64, r func(float64) float64) float64 { return lua51.Exp(b) }},
	{"math.fmod(b * 7, a)", func(a, b float64, r func(float64) float64) float64 { return math.Mod(r(b*7), a) }},
	{"math.frexp(b * 100)", func(a, b float64, r func(float64) float64) float64 { m, _ := math.Frexp(r(b * 100)); return m }},
	{"math.ldexp(a, 5)", func(a, b float64, r func(float64) float64) float64 { return math.Ldexp(a, 5) }},
	{"math.log(b)", func(a, b float64, r func(float64) float64) float64 { return lua51.Log(b) }},
	{"math.log10(b)", func(a, b float64, r func(float64) float64) float64 { return lua51.Log10(b) }},
	{"math.max(a, b - 2, 0.25)", func(a, b float64, r func(float64) float64) float64 { return math.Max(math.Max(a, r(b-2)), 0.25) }},
	{"math.min(a, b - 2, 0.25)", func(a, b float64, r func(float64) float64) float64 { return math.Min(math.Min(a, r(b-2)), 0.25) }},
	{"math.modf(b * a * 3)", func(a, b float64, r func(float64) float64) float64 { return math.Trunc(r(r(b*a) * 3)) }},
	{"math.pow(b, a * 3)", func(a, b float64, r func(float64) float64) float64 { return lua51.Pow(b, r(a*3)) }},
	{"b ^ a", func(a, b float64, r func(float64) float64) float64 { return lua51.Pow(b, a) }},
	{"math.rad(b * 90)", func(a, b float64, r func(float64) float64) float64 { return r(b*90) * r(math.Pi/180) }},
	{"math.sin(b * 3)", func(a, b float64, r func(float64) float64) float64 { return lua51.Sin(r(b * 3)) }},
	{"math.sinh(b)", func(a, b float64, r func(float64) float64) float64 { return lua51.Sinh(b) }},
	{"math.sqrt(b)", func(a, b float64, r func(float64) float64) float64 { return math.Sqrt(b) }},
	{"math.tan(a)", func(a, b float64, r func(float64) float64) float64 { return lua51.Tan(a) }},
	{"math.tanh(a * 3)", func(a, b float64, r func(float64) float64) float64 { return lua51.Tanh(r(a * 3)) }},
	{"math.pi * a + math.min(math.huge, b)", func(a, b float64, r func(float64) float64) float64 { return r(r(math.Pi)*a) + b }},
	{"math.floor(b * 3) + math.ceil(a * 3)", func(a, b float64, r func(float64) float64) float64 {
		return math.Floor(r(b*3)) + math.Ceil(r(a*3))
	}},
}

// Each function on float64 arrays gives exactly what Lua 5.1 computes;
// on float32 arrays it computes in float32 (sinf, powf, ...) and the
// evaluator gives the correctly rounded value of the same function of the
// same float32 inputs, with every operation around it rounded to float32
// as the GPU rounds it.
func TestEveryMathFunctionAgreesWithLua(t *testing.T) {
	for _, d := range []device.DType{device.Float64, device.Float32} {
		for _, m := range luaMath {
			t.Run(fmt.Sprintf("%s/%s", d, m.expr), func(t *testing.T) {
				const n = 200
				r := rand.New(rand.NewSource(3))
				a, b := HostArray{DType: d, Shape: []int{n}, Data: make([]byte, n*d.Size())}, HostArray{DType: d, Shape: []int{n}, Data: make([]byte, n*d.Size())}
				for i := 0; i < n; i++ {
					storeFloat(d, a.Data, i, r.Float64()*2-1)
					storeFloat(d, b.Data, i, 0.5+r.Float64()*4)
				}
				src := fmt.Sprintf(`return function(out, x, y)
					local i = kernels.grid(1)
					local a, b = x[i], y[i]
					out[i] = %s
				end`, m.expr)
				out := HostArray{DType: d, Shape: []int{n}, Data: make([]byte, n*d.Size())}
				got := runKernel(t, src, [3]int{4, 1, 1}, [3]int{50, 1, 1}, []any{out, a, b})[0]
				for i := 0; i < n; i++ {
					x, y := element(a, i), element(b, i)
					round := func(v float64) float64 { return v }
					if d == device.Float32 {
						round = f32
					}
					want := round(m.ref(x, y, round))
					if g := element(got, i); g != want && !(g != g && want != want) {
						t.Fatalf("%s with a = %v, b = %v: the evaluator gives %v, want %v", m.expr, x, y, g, want)
					}
				}
			})
		}
	}
}

// math.frexp and math.modf give both their values to `local a, b = ...`
// and to `a, b = ...`, with C's (and so Lua 5.1's) values at zeros,
// infinities and NaN: modf(inf) is inf and 0, where Go's math.Modf gives
// a NaN fraction.
func TestFrexpAndModfGiveTwoValuesAsLua(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	xs := []float64{2.75, -2.75, -3, 0.1, math.Copysign(0, -1), 0, inf, -inf, nan, 1e-310, 12345.678}
	want := [][4]float64{ // frexp's mantissa and exponent, modf's integer part and fraction
		{0.6875, 2, 2, 0.75}, {-0.6875, 2, -2, -0.75}, {-0.75, 2, -3, math.Copysign(0, -1)},
		{0.8, -3, 0, 0.1}, {math.Copysign(0, -1), 0, math.Copysign(0, -1), math.Copysign(0, -1)}, {0, 0, 0, 0},
		{inf, 0, inf, 0}, {-inf, 0, -inf, math.Copysign(0, -1)}, {nan, 0, nan, nan},
	}
	for i := len(want); i < len(xs); i++ {
		m, e := math.Frexp(xs[i])
		ip, fp := math.Modf(xs[i])
		want = append(want, [4]float64{m, float64(e), ip, fp})
	}
	n := len(xs)
	x := HostArray{DType: device.Float64, Shape: []int{n}, Data: make([]byte, 8*n)}
	for i, v := range xs {
		storeFloat(device.Float64, x.Data, i, v)
	}
	out := HostArray{DType: device.Float64, Shape: []int{n, 4}, Data: make([]byte, 32*n)}
	got := runKernel(t, `return function(out, x)
		local i = kernels.grid(1)
		if i > #x then return end
		local m, e = math.frexp(x[i])
		local ip, fp
		ip, fp = math.modf(x[i])
		out[i][1] = m
		out[i][2] = e
		out[i][3] = ip
		out[i][4] = fp
	end`, [3]int{1, 1, 1}, [3]int{32, 1, 1}, []any{out, x})[0]
	for i := range xs {
		for k := 0; k < 4; k++ {
			g, w := element(got, 4*i+k), want[i][k]
			same := g == w && math.Signbit(g) == math.Signbit(w) || g != g && w != w
			if !same {
				t.Errorf("x = %v: value %d is %v, want %v", xs[i], k+1, g, w)
			}
		}
	}
}

func TestMathTypesFollowTheirArguments(t *testing.T) {
	cases := []struct {
		expr string
		sig  Signature
		want []string // in the CUDA C
	}{
		{"math.sin(x[i])", Signature{arr(fl32, 1)}, []string{"sinf(p_x[(l0_i - 1)])"}},
		{"math.atan2(x[i], 2.0)", Signature{arr(fl32, 1)}, []string{"atan2f(p_x[(l0_i - 1)], (2e+00f))"}},
		{"math.pow(x[i], 2)", Signature{arr(fl32, 1)}, []string{"powf(p_x[(l0_i - 1)], (2e+00f))"}},
		{"math.fmod(x[i], 3)", Signature{arr(device.Float64, 1)}, []string{"fmod(p_x[(l0_i - 1)], (3e+00))"}},
		{"math.tanh(i)", Signature{arr(fl32, 1)}, []string{"tanh(((double)l0_i))"}},
		{"math.ldexp(x[i], i)", Signature{arr(fl32, 1)}, []string{"glua_ldexp(p_x[(l0_i - 1)], l0_i)"}},
		{"math.deg(x[i])", Signature{arr(fl32, 1)}, []string{"(p_x[(l0_i - 1)] / (1.7453292e-02f))"}},
		{"math.rad(x[i])", Signature{arr(device.Float64, 1)}, []string{"(p_x[(l0_i - 1)] * (1.7453292519943295e-02))"}},
		{"math.frexp(x[i])", Signature{arr(fl32, 1)}, []string{"glua_frexp_mant(p_x[(l0_i - 1)])"}},
		{"math.modf(x[i])", Signature{arr(device.Float64, 1)}, []string{"glua_modf_int(p_x[(l0_i - 1)])"}},
	}
	for _, c := range cases {
		src := fmt.Sprintf("return function(x) local i = kernels.grid(1); x[i] = %s end", c.expr)
		containsAll(t, CUDA(mustTranslate(t, src, c.sig, Options{})), c.want)
	}
	p := mustTranslate(t, `return function(x, e) local i = kernels.grid(1); local m, k = math.frexp(x[i]); e[i] = k; local a, b = math.modf(x[i]); x[i] = b end`,
		Signature{arr(fl32, 1), arr(device.Int32, 1)}, Options{})
	containsAll(t, CUDA(p), []string{"glua_frexp_exp(", "glua_modf_frac("})
}

func TestMathMisuseIsRefusedNamingTheCall(t *testing.T) {
	cases := []struct{ src, want string }{
		{`return function(x) x[1] = math.ldexp(x[1], 2.5) end`, "kernel.lua:1: math.ldexp's exponent must be an integer, not float32 (use math.floor)"},
		{`return function(x) x[1] = math.atan2(x[1]) end`, "math.atan2 takes 2 arguments"},
		{`return function(x) x[1] = math.log(x[1], 2) end`, "math.log takes one argument"},
		{`return function(x) x[1] = math.random() end`, "math.random is not allowed in a kernel"},
		{`return function(x) x[1] = math.fmod(x[1] > 0, 1) end`, "a number is expected, got boolean"},
	}
	for _, c := range cases {
		_, err := translate(t, c.src, Signature{arr(fl32, 1)}, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.src, err, c.want)
		}
	}
}

// The reference interpreter agrees: each expression run by lua5.1 itself
// (C's libm, correctly rounded or nearly) over the same float64 inputs
// gives what the evaluator gives (Go's math package, whose acos, for one,
// is up to two ulps off) within two ulps; frexp's and modf's second
// values exactly.
func TestMathFunctionsAgreeWithLua51(t *testing.T) {
	const n = 100
	r := rand.New(rand.NewSource(8))
	a, b := zeros(device.Float64, n), zeros(device.Float64, n)
	var as, bs []string
	for i := 0; i < n; i++ {
		storeFloat(device.Float64, a.Data, i, r.Float64()*2-1)
		storeFloat(device.Float64, b.Data, i, 0.5+r.Float64()*4)
		as, bs = append(as, fmt.Sprintf("%.17g", element(a, i))), append(bs, fmt.Sprintf("%.17g", element(b, i)))
	}
	exprs := []string{"select(2, math.frexp(b * 100))", "select(2, math.modf(b * a * 3))"}
	for _, m := range luaMath {
		exprs = append(exprs, m.expr)
	}
	var src strings.Builder
	fmt.Fprintf(&src, "local A, B = {%s}, {%s}\n", strings.Join(as, ", "), strings.Join(bs, ", "))
	for _, e := range exprs {
		fmt.Fprintf(&src, "for i = 1, %d do local a, b = A[i], B[i]; io.write(string.format('%%.17g ', %s)) end print()\n", n, e)
	}
	lines := strings.Split(luatest.RunLua51(t, src.String()), "\n")
	for k, e := range exprs {
		body := fmt.Sprintf(`return function(out, x, y)
			local i = kernels.grid(1)
			local a, b = x[i], y[i]
			out[i] = %s
		end`, e)
		if strings.HasPrefix(e, "select(2, ") {
			call := strings.TrimSuffix(strings.TrimPrefix(e, "select(2, "), ")")
			body = fmt.Sprintf(`return function(out, x, y)
				local i = kernels.grid(1)
				local a, b = x[i], y[i]
				local first, second = %s
				out[i] = second
			end`, call)
		}
		got := runKernel(t, body, [3]int{1, 1, 1}, [3]int{n, 1, 1}, []any{zeros(device.Float64, n), a, b})[0]
		for i, f := range strings.Fields(lines[k]) {
			want, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatalf("lua5.1 printed %q for %s", f, e)
			}
			g := element(got, i)
			if ulpsApart(g, want) > 2 {
				t.Errorf("%s with a = %s, b = %s: the evaluator gives %v, lua5.1 %v", e, as[i], bs[i], g, want)
				break
			}
		}
	}
}

// ulpsApart is how many float64 values lie between x and y (0 for two
// NaNs).
func ulpsApart(x, y float64) float64 {
	if x == y || x != x && y != y {
		return 0
	}
	order := func(v float64) float64 {
		b := int64(math.Float64bits(v))
		if b < 0 {
			b = math.MinInt64 - b
		}
		return float64(b)
	}
	return math.Abs(order(x) - order(y))
}
