package jit

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
)

const axpbySrc = `return function(x, y) return 2 * x * y + 1 end`

func checkMap(t *testing.T, src string, sig Signature, out device.DType) (*Program, error) {
	t.Helper()
	f, err := ParseMap(kernelTree(t, src), "kernel.lua")
	if err != nil {
		return nil, err
	}
	return CheckMap(f, sig, out, Options{})
}

func TestMapTranslatesToTheElementwiseLaunchShape(t *testing.T) {
	p, err := checkMap(t, axpbySrc, Signature{arr(device.Float32, 1), arr(device.Float32, 1)}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	src := CUDA(p)
	containsAll(t, src, []string{
		`extern "C" __global__ void glua_map(float* p_out, i64 p_out_n0, float* p_in1, i64 p_in1_n0, float* p_in2, i64 p_in2_n0)`,
		fmt.Sprintf("for (u32 glua_b = units_first<%d, u32>(); glua_b < (u32)glua_n; glua_b += units_step<%[1]d, u32>()) {", kernels.ElementsPerThread),
		fmt.Sprintf("for (i64 glua_b = units_first<%d, i64>(); glua_b < (i64)glua_n; glua_b += units_step<%[1]d, i64>()) {", kernels.ElementsPerThread),
		"glua_in1[glua_k] = p_in1[glua_u];",
		"p_out[(l0_i - 1)] = (float)(((((2e+00f) * l1_x) * l2_y) + (1e+00f)));",
	})
	if strings.Contains(src, "double") && strings.Contains(src, "l1_x") && strings.Contains(src, "(double)(l1_x") {
		t.Errorf("float32 map computes in float64:\n%s", src)
	}
}

func TestMapFloatNumberStaysFloat32BesideFloat32Arrays(t *testing.T) {
	p, err := checkMap(t, `return function(a, x, y) return a * x + y end`,
		Signature{floatArg, arr(device.Float32, 1), arr(device.Float32, 1)}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	containsAll(t, CUDA(p), []string{"double l1_arg1", "float l2_a = 0;", "l2_a = ((float)l1_arg1);"})
}

// TestMapAgreesWithPlainLua runs map functions on the evaluator and the
// same Lua function element by element in gopher-lua, for each dtype.
func TestMapAgreesWithPlainLua(t *testing.T) {
	funcs := []string{
		axpbySrc,
		`return function(x, y) local d = x - y; if d < 0 then d = -d end return math.max(d, y) end`,
		`return function(x, y) local s = 0.0 for k = 1, 3 do s = s + x * k end return s - y end`,
	}
	r := rand.New(rand.NewSource(1))
	for _, d := range []device.DType{device.Float32, device.Float64, device.Int32} {
		for _, src := range funcs {
			n := 1000
			x, y, out := randomArray(r, d, 10, 100), randomArray(r, d, n), randomArray(r, d, n)
			p, err := checkMap(t, src, Signature{arr(d, 2), arr(d, 1)}, d)
			if err != nil {
				t.Fatalf("%s %s: %v", d, src, err)
			}
			flat := HostArray{DType: x.DType, Shape: []int{n}, Data: x.Data} // the runtime passes arrays flat
			if err := Run(p, [3]int{3, 1, 1}, [3]int{64, 1, 1}, []any{out, flat, y}); err != nil {
				t.Fatalf("%s %s: %v", d, src, err)
			}
			L := lua.NewState()
			if err := L.DoString(src); err != nil {
				t.Fatal(err)
			}
			fn := L.Get(-1)
			tol := 0.0
			if d == device.Float32 {
				tol = 1e-5
			}
			for i := 0; i < n; i++ {
				L.Push(fn)
				L.Push(lua.LNumber(element(x, i)))
				L.Push(lua.LNumber(element(y, i)))
				L.Call(2, 1)
				want := float64(L.Get(-1).(lua.LNumber))
				L.Pop(1)
				if got := element(out, i); math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
					t.Fatalf("%s %s: element %d = %v, plain Lua %v", d, src, i+1, got, want)
				}
			}
			L.Close()
		}
	}
}

func TestMapNumbersBroadcast(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	x, out := randomArray(r, device.Float64, 100), randomArray(r, device.Float64, 100)
	p, err := checkMap(t, `return function(a, x, b) return a * x + b end`, Signature{floatArg, arr(device.Float64, 1), intArg}, device.Float64)
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(p, [3]int{1, 1, 1}, [3]int{32, 1, 1}, []any{out, 0.5, x, 3.0}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if got, want := element(out, i), 0.5*element(x, i)+3; got != want {
			t.Fatalf("element %d = %v, want %v", i+1, got, want)
		}
	}
}

func TestMapRejectsWhatIsNotAScalarFunction(t *testing.T) {
	cases := []struct{ src, want string }{
		{"return function(x)\n  local t = {x}\n  return x\nend", "kernel.lua:2: a table constructor is not allowed"},
		{"return function(x)\n  return x[1]\nend", "kernel.lua:2: x is not an array"},
		{"return function(x)\n  return #x\nend", "kernel.lua:2: x is not an array"},
		{"return function(x)\n  local i = kernels.grid(1)\n  return x\nend", "kernel.lua:2: kernels.grid is not allowed in a map function"},
		{"return function(x)\n  if x > 0 then return 1 end\n  return x\nend", "kernel.lua:2: a map function returns one value, once"},
		{"return function(x)\n  x = x + 1\nend", "kernel.lua:1: a map function ends with `return expr`"},
		{"return function(x)\n  return x > 0\nend", "kernel.lua:2: a map function returns a number, not a boolean"},
		{"return function(x)\n  return g(x)\nend", "kernel.lua:2: a call of g is not allowed"},
	}
	for _, c := range cases {
		_, err := checkMap(t, c.src, Signature{arr(device.Float32, 1)}, device.Float32)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
}
