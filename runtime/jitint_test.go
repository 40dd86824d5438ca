package runtime_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// luaNumbers runs src, which sets the global got to a list of numbers,
// and returns them.
func luaNumbers(t *testing.T, rt *runtime.Runtime, src string) []float64 {
	t.Helper()
	if err := rt.DoString(src); err != nil {
		t.Fatal(err)
	}
	if err := rt.DoString(`local t = got; got = cuda.host_array(#t, "float64"); for k, v in ipairs(t) do got[k] = v end`); err != nil {
		t.Fatal(err)
	}
	v, err := rt.Global("got")
	if err != nil {
		t.Fatal(err)
	}
	return v.(*runtime.HostArray).Floats()
}

// The kernels, and the same integer work through a local, math
// functions, a comparison, an atomic, kernels.map and kernels.map_reduce:
// an integer expression is int64 wherever it is stored.
func TestJitStoresIntegerExpressionsExactlyOnEachBackend(t *testing.T) {
	const src = `
cuda, kernels = require("cuda"), require("kernels")
local k = kernels.jit(function(out, i)
  out[1] = (i * i) % 7
  out[2] = (i * i + 1) - i * i
  local v = i * i
  out[3] = v % 7
  out[4] = math.abs(i * i - (i - 1) * (i + 1))
  out[5] = math.max(i * i, 3) - (i - 1) * (i + 1)
  kernels.atomic_add(out, 6, (i * i) % 7)
end)
local f32, f64 = cuda.zeros(6, "float32"), cuda.zeros(6, "float64")
k:launch({grid = 1, block = 1}, f32, 5001)
k:launch({grid = 1, block = 1}, f64, 100000001)
local cmp = kernels.jit(function(out, i)
  if i * i == 25010000.0 then out[1] = 1 else out[1] = 2 end
end)
local c = cuda.zeros(1, "float32")
cmp:launch({grid = 1, block = 1}, c, 5001)
local wrap = cuda.zeros(2, "int64")
kernels.jit(function(out, i)
  out[1] = (i * i) % 1000
  out[2] = -(i * i) % 1000
end):launch({grid = 1, block = 1}, wrap, 3037000500)

local xs = cuda.to_device({5001, 100000001}, "int64")
local m32, m64 = cuda.zeros(2, "float32"), cuda.zeros(2, "float64")
kernels.map(function(x) return (x * x) % 7 end, m32, xs)
kernels.map(function(x) return (x * x + 1) - x * x end, m64, xs)
local half = cuda.zeros(2, "float64")
kernels.map(function(x) return x / 2 end, half, xs)
local num = cuda.zeros(1, "float32")
kernels.map(function(i) return (i * i) % 7 end, num, 5001)
local sum = kernels.map_reduce(function(x) return (x * x) % 7 end, "sum", xs)
local rows = kernels.map_reduce(function(x) return (x * x + 1) - x * x end, "sum", xs:reshape({1, 2}), {axis = 2, out = cuda.zeros(1, "float32")})

got = {}
for _, a in ipairs({f32, f64, c, wrap, m32, m64, half, num, rows}) do
  for _, v in ipairs(a:to_table()) do got[#got + 1] = v end
end
got[#got + 1] = sum
`
	want := []float64{
		2, 1, 2, 1, 1, 2, // float32, i = 5001
		2, 1, 2, 1, 1, 2, // float64, i = 100000001 (i * i is past 2^53)
		2,        // the comparison is exact
		384, 616, // int64 wraps as NumPy's
		2, 2, // map into float32
		1, 1, // into float64
		2500.5, 50000000.5, // / is float64 division
		2, // a number argument
		2, // an axis reduction into float32
		4, // map_reduce of integers
	}
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		got := luaNumbers(t, rt, src)
		if len(got) != len(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("value %d is %v, want %v (all: %v)", i+1, got[i], want[i], got)
			}
		}
	})
}

// An integer % by zero ends the launch with an error naming the
// operation and the function, from kernels.jit (with and without
// check_bounds), kernels.map, kernels.map_reduce (its function and its op)
// and an axis reduction; the same kernel then runs with a divisor, and
// the runtime with it.
func TestJitIntegerModuloByZeroIsAnErrorOnEachBackend(t *testing.T) {
	cases := []struct {
		name, call, want string
		again            bool // the same call with N = 7 runs
	}{
		{"kernels.jit", `kernels.jit(function(out, i, n)
			out[1] = (i * i) % n
		end):launch({grid = 4, block = 64}, f32, 5001, N)`,
			"Kernel:launch: jit: <string>:3: integer modulo by zero: the divisor of i * i % n is 0, in the kernel at <string>:2", true},
		{"a launch on a stream", `kernels.jit(function(out, i, n)
			out[kernels.grid(1)] = (i * i) % n
		end):launch({grid = 4, block = 64, stream = cuda.stream()}, f32, 5001, N)`,
			"jit: <string>:3: integer modulo by zero: the divisor of i * i % n is 0, in the kernel at <string>:2", true},
		{"a named kernel with check_bounds", `kernels.jit(function(out, i, n)
			out[kernels.grid(1) % 4 + 1] = i % n
		end, {name = "squares", check_bounds = true}):launch({grid = 4, block = 64}, f32, 5001, N)`,
			"jit: <string>:3: integer modulo by zero: the divisor of i % n is 0, in the kernel squares at <string>:2", true},
		// it stored -nan: the 0 took the float type of out
		{"the issue's literal 0", `kernels.jit(function(out, i)
			out[1] = (i * i) % 0
		end):launch({grid = 1, block = 1}, f32, 5001)`,
			"jit: <string>:3: integer modulo by zero: the divisor of i * i % 0 is 0, in the kernel at <string>:2", false},
		{"kernels.map", `kernels.map(function(x, n)
			return x % n
		end, f32, ints, N)`,
			"kernels.map: jit: <string>:3: integer modulo by zero: the divisor of x % n is 0, in the map function at <string>:2", true},
		{"kernels.map_reduce", `kernels.map_reduce(function(x, n)
			return x % n
		end, "sum", ints, N)`,
			"integer modulo by zero: the divisor of x % n is 0, in the map function at <string>:2", true},
		{"an op function", `kernels.map_reduce(function(x, n) return x * n end, function(a, b)
			return a % b
		end, ints, N)`,
			"integer modulo by zero: the divisor of a % b is 0, in the op function at <string>:2", true},
		{"an axis reduction", `kernels.map_reduce(function(x, n)
			return x % n
		end, "max", ints:reshape({50, 20}), N, {axis = 2})`,
			"integer modulo by zero: the divisor of x % n is 0, in the map function at <string>:2", true},
	}
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		if err := rt.DoString(`cuda, kernels = require("cuda"), require("kernels")
			f32 = cuda.zeros(1000, "float32")
			ints = cuda.to_device((function() local t = {} for i = 1, 1000 do t[i] = i end return t end)(), "int64")`); err != nil {
			t.Fatal(err)
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				// Each call starts once the work before it is done: the
				// launch on a stream of its own writes f32 as the others
				// do on the runtime's stream, which nothing else orders
				// (the CPU backend refuses such a pair, as it races on a
				// GPU).
				if err := rt.Synchronize(); err != nil {
					t.Fatal(err)
				}
				err := rt.DoString("local N = 0\n" + tc.call)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one containing %q", err, tc.want)
				}
				if tc.again {
					// the same function with a divisor of 7
					if err := rt.Synchronize(); err != nil {
						t.Fatal(err)
					}
					if err := rt.DoString("local N = 7\n" + tc.call); err != nil {
						t.Fatalf("after the error: %v", err)
					}
				}
			})
		}
		// the runtime is usable after all of them
		if err := rt.DoString(`kernels.map(function(x) return x % 7 end, f32, ints)
			assert(f32:to_table()[1000] == 1000 % 7, "a map after the errors")`); err != nil {
			t.Fatal(err)
		}
	})
}

// A kernel that reads back its error record cannot be in a graph, on
// either backend: the GPU refuses it at the capture, the CPU (which calls
// the function again at each launch) at g:launch().
func TestJitErrorRecordIsRefusedInAGraphOnEachBackend(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		err := rt.DoString(`local cuda, kernels = require("cuda"), require("kernels")
			local out, x = cuda.zeros(10, "float32"), cuda.to_device({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "int64")
			local ok = cuda.graph(function() kernels.map(function(v) return v % 3 end, out, x) end)
			ok:launch()
			assert(out:to_table()[10] == 1, "a literal divisor is not checked, and a graph holds it")
			local g = cuda.graph(function() kernels.map(function(v, n) return v % n end, out, x, 3) end)
			g:launch()`)
		want := "a kernel that reports errors from the device (check_bounds, or an integer % whose divisor may be 0) cannot be captured in a graph"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want one containing %q", err, want)
		}
	})
}

// mapIntegerSources are map functions of int64 arrays x and y (y never 0)
// with the dtype each stores into: every integer operation, wrapping
// products, the conversions of large integers to each float dtype, a
// divisor checked for 0, and int32 elements.
var mapIntegerSources = []struct {
	src string
	out device.DType
}{
	{"x * y", runtime.Int64}, {"x + y", runtime.Int64}, {"x - y", runtime.Int64}, {"-x", runtime.Int64},
	{"x % y", runtime.Int64}, {"x % 1000", runtime.Int64}, {"math.abs(x)", runtime.Int64},
	{"math.max(x, y) - math.min(x, y)", runtime.Int64}, {"x / y", runtime.Float64},
	{"x * y", runtime.Float32}, {"x * y", runtime.Float64}, {"x * y", runtime.Float16}, {"x * y", runtime.BFloat16},
	{"x * y", runtime.Int32}, {"x * y", runtime.Uint8}, {"(x * y) % 7 + 0.5", runtime.Float32},
	{"math.floor(x / y)", runtime.Int64}, {"x * 2.5", runtime.Float32},
}

// TestMapIntegerWorkIsBitForBitTheSameOnCPUAndGPU runs every integer
// operation of the kernel language on int64 values near the limits on
// both backends and compares the results' bytes: the CPU evaluator is
// the GPU's stand-in.
func TestMapIntegerWorkIsBitForBitTheSameOnCPUAndGPU(t *testing.T) {
	gpu := newCUDA(t)
	cpu := newCPU(t, runtime.Options{})

	const n = 4099 // more than a block, not a multiple of one
	r := rand.New(rand.NewPCG(29, 3))
	values := func() *runtime.HostArray {
		h, err := runtime.NewHostArray([]int{n}, runtime.Int64)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			var v int64
			switch i % 4 {
			case 0:
				v = math.MaxInt64 - r.Int64N(1000)
			case 1:
				v = math.MinInt64 + r.Int64N(1000)
			case 2:
				v = 3037000500 + r.Int64N(2000) - 1000 // squares wrap
			default:
				v = r.Int64() - r.Int64()
			}
			if v == 0 {
				v = -1
			}
			binary.LittleEndian.PutUint64(h.Bytes()[8*i:], uint64(v))
		}
		return h
	}
	x, y := values(), values()
	results := func(rt *runtime.Runtime) [][]byte {
		dx, err := rt.ToDevice(x)
		if err != nil {
			t.Fatal(err)
		}
		dy, err := rt.ToDevice(y)
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.SetGlobal("x", dx); err != nil {
			t.Fatal(err)
		}
		if err := rt.SetGlobal("y", dy); err != nil {
			t.Fatal(err)
		}
		var out [][]byte
		for _, m := range mapIntegerSources {
			src := fmt.Sprintf(`local cuda, kernels = require("cuda"), require("kernels")
				out = cuda.zeros(%d, %q)
				kernels.map(function(x, y) return %s end, out, x, y)
				-- int32 elements compute in int64 too
				out32 = cuda.zeros(%d, %q)
				kernels.map(function(x, y) return %s end, out32, x:reshape({%d}), y)
			`, n, m.out, m.src, n, m.out, m.src, n)
			src = strings.Replace(src, "x:reshape", "kernels.map(function(v) return v end, cuda.zeros(x.shape, \"int32\"), x):reshape", 1)
			if err := rt.DoString(src); err != nil {
				t.Fatalf("%s into %s: %v", m.src, m.out, err)
			}
			for _, name := range []string{"out", "out32"} {
				v, err := rt.Global(name)
				if err != nil {
					t.Fatal(err)
				}
				h, err := v.(*runtime.Array).CopyToHost(nil)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, h.Bytes())
			}
		}
		return out
	}
	want, got := results(cpu), results(gpu)
	for k, m := range mapIntegerSources {
		for j, what := range []string{"int64 elements", "int32 elements"} {
			w, g := want[2*k+j], got[2*k+j]
			if bytes.Equal(w, g) {
				continue
			}
			size := m.out.Size()
			for i := 0; i < n; i++ {
				if !bytes.Equal(w[i*size:(i+1)*size], g[i*size:(i+1)*size]) {
					t.Errorf("%s into %s, %s: element %d is %x on the GPU, %x on the CPU", m.src, m.out, what, i+1, g[i*size:(i+1)*size], w[i*size:(i+1)*size])
					break
				}
			}
		}
	}
}
