package jit

import (
	"math"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

// scriptEnv stands in for the locals a script's function captures.
type scriptEnv map[string]Capture

func (e scriptEnv) Upvalue(name string) (Capture, bool) {
	c, ok := e[name]
	return c, ok
}

func number(v float64) Capture { return Capture{Kind: "number", Number: v} }

// deviceFn parses src's function as a device function capturing env.
func deviceFn(t *testing.T, src string, env Env) Capture {
	t.Helper()
	f, err := ParseDevice(kernelTree(t, src), "kernel.lua", env)
	if err != nil {
		t.Fatalf("ParseDevice: %v", err)
	}
	return Capture{Kind: "function", Func: f}
}

// translateIn parses src's kernel in scope and types it for sig.
func translateIn(t *testing.T, src string, s Scope, sig Signature) (*Program, error) {
	t.Helper()
	f, err := ParseIn(kernelTree(t, src), "kernel.lua", s)
	if err != nil {
		return nil, err
	}
	return Check(f, sig, Options{Env: s.Env})
}

func mustTranslateIn(t *testing.T, src string, s Scope, sig Signature) *Program {
	t.Helper()
	p, err := translateIn(t, src, s, sig)
	if err != nil {
		t.Fatalf("translate: %v", err)
	}
	return p
}

func int64s(a HostArray) []int64 {
	out := make([]int64, len(a.Data)/a.DType.Size())
	for i := range out {
		out[i] = int64(element(a, i))
	}
	return out
}

func newArray(d device.DType, shape ...int) HostArray {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return HostArray{DType: d, Shape: shape, Data: make([]byte, n*d.Size())}
}

func TestIndexNamesAreCUDAsWithThreadAndBlockFromOne(t *testing.T) {
	src := `return function(out)
  local i = kernels.grid(1)
  out[i] = (kernels.blockIdx.x - 1) * kernels.blockDim.x + kernels.threadIdx.x - i + 100 * kernels.gridDim.x
end`
	p := mustTranslate(t, src, Signature{arr(device.Int64, 1)}, Options{})
	containsAll(t, CUDA(p), []string{"((i64)blockIdx.x + 1)", "((i64)blockDim.x)", "((i64)threadIdx.x + 1)", "((i64)gridDim.x)"})
	out := newArray(device.Int64, 12)
	if err := Run(p, [3]int{3, 1, 1}, [3]int{4, 1, 1}, []any{out}); err != nil {
		t.Fatal(err)
	}
	for i, v := range int64s(out) {
		if v != 300 {
			t.Fatalf("thread %d: (blockIdx.x - 1) * blockDim.x + threadIdx.x - grid(1) + 100 * gridDim.x = %d, want 300", i+1, v)
		}
	}
}

func TestNumbaSpellingsAreRefusedNamingGluas(t *testing.T) {
	cases := []struct{ body, want string }{
		{`x[cuda.threadIdx.x] = 1`, "cuda.threadIdx.x is Numba's spelling; in a glua kernel write kernels.threadIdx.x (1-based"},
		{`x[1] = cuda.blockDim.y`, "cuda.blockDim.y is Numba's spelling; in a glua kernel write kernels.blockDim.y"},
		{`local i = cuda.grid(1)`, "cuda.grid is Numba's spelling; in a glua kernel write kernels.grid"},
		{`cuda.syncthreads()`, "cuda.syncthreads is Numba's spelling; in a glua kernel write kernels.syncthreads"},
		{`local s = cuda.shared.array(4, "float32")`, "cuda.shared.array is Numba's spelling; in a glua kernel write kernels.shared"},
		{`cuda.atomic.add(x, 1, 1)`, "cuda.atomic.add is Numba's spelling; in a glua kernel write kernels.atomic_add"},
		{`cuda.to_device(x)`, "cuda.to_device is not allowed in a kernel"},
		{`x[1] = kernels.threadIdx`, "kernels.threadIdx is read as kernels.threadIdx.x, .y or .z"},
		{`x[1] = kernels.blockIdx.w`, "kernels.blockIdx has the fields x, y and z, not \"w\""},
		{`local i = kernels.grid(4)`, "kernels.grid takes the number of dimensions, 1, 2 or 3, as a literal"},
	}
	for _, tc := range cases {
		_, err := parseKernel(t, "return function(x, n)\n"+tc.body+"\nend")
		if err == nil || !strings.Contains(err.Error(), "kernel.lua:2: "+tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.body, err, tc.want)
		}
	}
}

func TestSharedAndLocalArraysHaveFixedShapes(t *testing.T) {
	src := `return function(x)
  local s = kernels.shared({TPB, TPB + 1}, "float32")
  local c = kernels.shared({2, 3, 4}, "float64")
  local l = kernels.local_array({2, 3}, "int64")
  local v = kernels.local_array(TPB, "int32")
  local i, j = kernels.threadIdx.x, kernels.threadIdx.y
  s[i][j] = x[i][j]
  l[2][3] = i
  v[TPB] = j
  c[2][3][4] = s[j][i] + l[2][3] + v[TPB]
  x[i][j] = c[2][3][4]
end`
	p := mustTranslateIn(t, src, Scope{Env: scriptEnv{"TPB": number(16)}}, Signature{arr(fl32, 2)})
	containsAll(t, CUDA(p), []string{
		"__shared__ float s0_s[272];", "__shared__ double s1_c[24];",
		"i64 a0_l[6] = {0};", "int a1_v[16] = {0};",
		"s0_s[((l0_i - 1) * 17LL + (l1_j - 1))]",
		"s1_c[((((2LL) - 1) * 3LL + ((3LL) - 1)) * 4LL + ((4LL) - 1))]",
	})
	if p.SharedBytes() != 16*17*4+24*8 {
		t.Errorf("SharedBytes %d, want %d", p.SharedBytes(), 16*17*4+24*8)
	}
}

func TestArrayShapesAreCheckedWhenKnown(t *testing.T) {
	limits := device.DataCentreLimits()
	cases := []struct{ body, want string }{
		{`local s = kernels.shared(1e9, "float32")`, "kernels.shared(1e+09, \"float32\") is 4000000000 bytes, too large for a block: the device gives a block at most 49152 bytes of static shared memory (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)"},
		{`local s = kernels.shared({128, 128}, "float32")`, "is 65536 bytes, too large for a block"},
		{`local s = kernels.shared(0, "float32")`, "kernels.shared's lengths must be positive integers, got 0"},
		{`local s = kernels.shared({4, 2.5}, "float32")`, "kernels.shared's lengths must be positive integers, got 2.5"},
		{`local s = kernels.shared({1, 2, 3, 4}, "float32")`, "kernels.shared's shape is a length or a table of 1 to 3 lengths"},
		{`local s = kernels.local_array(n, "float32")`, "kernels.local_array's shape must be known when the kernel is compiled"},
		{`local s = kernels.local_array(1e6, "float64")`, "is 8000000 bytes, too large for a thread"},
		{`local s = kernels.local_array(4, "float")`, `kernels.local_array: unknown dtype "float"`},
	}
	for _, tc := range cases {
		_, err := ParseIn(kernelTree(t, "return function(x, n)\n"+tc.body+"\nend"), "kernel.lua", Scope{SharedPerBlock: limits.SharedPerBlock})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "jit: kernel.lua:2: ") {
			t.Errorf("%s: error %v, want one containing %q", tc.body, err, tc.want)
		}
	}
	// a captured size is checked when the kernel is typed
	env := scriptEnv{"N": number(-3)}
	_, err := translateIn(t, "return function(x)\nlocal s = kernels.shared(N, \"float32\")\nend", Scope{Env: env}, Signature{arr(fl32, 1)})
	if err == nil || !strings.Contains(err.Error(), "kernel.lua:2: kernels.shared's lengths must be positive integers, got -3") {
		t.Errorf("captured negative size: %v", err)
	}
}

func TestCapturedNumbersAreConstantsOfTheKernel(t *testing.T) {
	src := `return function(x)
  local i = kernels.grid(1)
  for k = 1, REPS do x[i] = x[i] * SCALE end
end`
	env := scriptEnv{"REPS": number(3), "SCALE": number(0.5)}
	f, err := ParseIn(kernelTree(t, src), "kernel.lua", Scope{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.Captured, ",") != "REPS,SCALE" {
		t.Errorf("captured %v, want REPS and SCALE", f.Captured)
	}
	p, err := Check(f, Signature{arr(fl32, 1)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	containsAll(t, CUDA(p), []string{"f1_stop = (3LL)", "(5e-01f)"})
	x := newArray(device.Float32, 4)
	for i := range 4 {
		storeFloat(device.Float32, x.Data, i, float64(i+1))
	}
	if err := Run(p, [3]int{1, 1, 1}, [3]int{4, 1, 1}, []any{x}); err != nil {
		t.Fatal(err)
	}
	if got := element(x, 3); got != 0.5 {
		t.Errorf("4 * 0.5^3 = %v, want 0.5", got)
	}
	key, err := CaptureKey(f)
	if err != nil {
		t.Fatal(err)
	}
	env["REPS"] = number(4)
	if again, _ := CaptureKey(f); again == key {
		t.Errorf("the capture key %q did not change with REPS", key)
	}
	env["SCALE"] = Capture{Kind: "table"}
	if _, err := CaptureKey(f); err == nil || !strings.Contains(err.Error(), "kernel.lua:1: the captured local SCALE is a table; a kernel may capture numbers") {
		t.Errorf("a table captured at the launch: %v", err)
	}
	_, err = ParseIn(kernelTree(t, src), "kernel.lua", Scope{Env: env})
	if err == nil || !strings.Contains(err.Error(), "kernel.lua:3: the captured local SCALE is a table") {
		t.Errorf("a table captured at kernels.jit: %v", err)
	}
}

func TestDeviceFunctionsGiveSeveralValuesTypedPerCall(t *testing.T) {
	env := scriptEnv{}
	env["divmod"] = deviceFn(t, `return function(a, b)
  local q = math.floor(a / b)
  return q, a - q * b
end`, nil)
	env["clamp"] = deviceFn(t, `return function(v, lo, hi)
  if v < lo then return lo end
  if v > hi then return hi end
  return v
end`, nil)
	env["digits"] = deviceFn(t, `return function(n)
  local tens, ones = divmod(n, 10)
  return clamp(tens, 0, 5), ones
end`, env)
	src := `return function(n, q, r, c)
  local i = kernels.grid(1)
  q[i], r[i] = digits(n[i])
  c[i] = clamp(n[i] / 7, 1.5, 9.25) + digits(0) -- its first value only
end`
	p := mustTranslateIn(t, src, Scope{Env: env}, Signature{arr(device.Int64, 1), arr(device.Int64, 1), arr(device.Int64, 1), arr(device.Float64, 1)})
	if len(p.Funcs) != 4 {
		t.Fatalf("%d functions, want divmod, clamp for integers, digits and clamp for floats", len(p.Funcs))
	}
	containsAll(t, CUDA(p), []string{
		// math.floor(a / b) may trap (b = 0), so every function can stop
		"__device__ inline i64 glua_dev1_divmod(i64 l0_a, i64 l1_b, i64* glua_r2, i64* glua_err, bool& glua_stop)",
		"__device__ inline double glua_dev4_clamp(double l0_v, double l1_lo, double l2_hi, i64* glua_err, bool& glua_stop)",
		"if (glua_r2) *glua_r2 = ",
		"glua_dev3_digits(", "(i64*)0",
	})
	vals := []int64{0, 7, 19, 42, 63, 99, 100, -5}
	n := newArray(device.Int64, len(vals))
	for i, v := range vals {
		storeInt(device.Int64, n.Data, i, v)
	}
	q, r, c := newArray(device.Int64, len(vals)), newArray(device.Int64, len(vals)), newArray(device.Float64, len(vals))
	if err := Run(p, [3]int{1, 1, 1}, [3]int{len(vals), 1, 1}, []any{n, q, r, c}); err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		tens := int64(math.Floor(float64(v) / 10))
		wantC := math.Max(1.5, math.Min(float64(v)/7, 9.25))
		if got := int64s(q)[i]; got != min(max(tens, 0), 5) {
			t.Errorf("digits(%d) first value %d, want %d", v, got, min(max(tens, 0), 5))
		}
		if got := int64s(r)[i]; got != v-tens*10 {
			t.Errorf("digits(%d) second value %d, want %d", v, got, v-tens*10)
		}
		if got := element(c, i); got != wantC {
			t.Errorf("clamp(%d / 7, 1.5, 9.25) = %v, want %v", v, got, wantC)
		}
	}
}

func TestRecursionIsRefusedNamingTheCycle(t *testing.T) {
	env := scriptEnv{"odd": {Kind: "function"}} // as the script's local is, while even is parsed
	env["even"] = deviceFn(t, "return function(n)\nif n == 0 then return true end\nreturn odd(n - 1)\nend", env)
	env["odd"] = deviceFn(t, "return function(n)\nif n == 0 then return false end\nreturn even(n - 1)\nend", env)
	_, err := translateIn(t, "return function(x)\nif even(4) then x[1] = 1 end\nend", Scope{Env: env}, Signature{arr(fl32, 1)})
	if err == nil || !strings.Contains(err.Error(), "recursion is not allowed in a kernel: even calls odd calls even") {
		t.Errorf("error %v", err)
	}
}

func TestDeviceFunctionMistakesNameTheFunction(t *testing.T) {
	env := scriptEnv{
		"two":    deviceFn(t, "return function(a) return a, a end", nil),
		"maybe":  deviceFn(t, "return function(a) if a > 0 then return a end end", nil),
		"mixed":  deviceFn(t, "return function(a) if a > 0 then return a, a end return a end", nil),
		"silent": deviceFn(t, "return function(a) local b = a end", nil),
		"K":      number(2),
	}
	cases := []struct{ body, want string }{
		{`local a, b, c = two(1)`, "kernel.lua:2: two gives 2 value(s), assigned to 3 name(s)"},
		{`x[1] = two(1, 2)`, "kernel.lua:2: two takes 1 arguments (a), got 2"},
		{`x[1] = maybe(1)`, "maybe must end with `return` and its values"},
		{`x[1] = mixed(1)`, "the returns of mixed give 2 and 1 values"},
		{`x[1] = silent(1)`, "kernel.lua:2: silent returns no value"},
		{`x[1] = K(1)`, "kernel.lua:2: K is a number, not a function"},
		{`x[1] = two(x)`, "the array x can only be indexed"},
	}
	for _, tc := range cases {
		_, err := translateIn(t, "return function(x)\n"+tc.body+"\nend", Scope{Env: env}, Signature{arr(fl32, 1)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.body, err, tc.want)
		}
	}
	_, err := parseKernel(t, "return function(x)\nlocal s = kernels.shared(4, \"float32\")\nend")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ParseDevice(kernelTree(t, "return function(x)\nlocal s = kernels.shared(4, \"float32\")\nreturn 1\nend"), "kernel.lua", nil)
	if err == nil || !strings.Contains(err.Error(), "kernel.lua:2: kernels.shared is not allowed in a device function") {
		t.Errorf("shared array in a device function: %v", err)
	}
	_, err = ParseIn(kernelTree(t, "return function(x)\nf(x)\nend"), "kernel.lua", Scope{Env: scriptEnv{"f": env["two"]}})
	if err == nil || !strings.Contains(err.Error(), "kernel.lua:2: the value of f is not used") {
		t.Errorf("a device function called as a statement: %v", err)
	}
	// a device function outside the language is refused by kernels.jit, at its own line
	_, bad := ParseDevice(kernelTree(t, "return function(a)\nreturn {a}\nend"), "device.lua", nil)
	_, err = ParseIn(kernelTree(t, "return function(x)\nx[1] = f(1)\nend"), "kernel.lua", Scope{Env: scriptEnv{"f": {Kind: "function", Err: bad}}})
	if err == nil || err.Error() != "jit: device.lua:2: a table constructor is not allowed in a kernel (in a device function, which a kernel calls)" {
		t.Errorf("a device function outside the language: %v", err)
	}
}

func TestMapFunctionsRefuseTheIndexNames(t *testing.T) {
	_, err := ParseMap(kernelTree(t, "return function(x)\nreturn x + kernels.threadIdx.x\nend"), "map.lua")
	if err == nil || !strings.Contains(err.Error(), "map.lua:2: kernels.threadIdx is not allowed in a map function") {
		t.Errorf("error %v", err)
	}
}

func TestALocalsTypeIsTheJoinOfItsValues(t *testing.T) {
	src := `return function(m, out)
  local i = kernels.grid(1)
  local s = 0
  local n
  n = 1
  for j = 1, m.shape[2] do
    s = s + m[i][j]
    n = n * 2
  end
  local w = s
  w = w + 0.25
  out[i] = s + n + w
end`
	p := mustTranslate(t, src, Signature{arr(fl32, 2), arr(device.Float64, 1)}, Options{})
	types := map[string]Type{}
	for _, l := range p.Locals {
		types[l.Name] = l.Type
	}
	if types["s"] != Float32 || types["n"] != Int || types["w"] != Float32 {
		t.Errorf("s is %s, n %s, w %s; want float32 (0 then float32 elements), integer, float32", types["s"], types["n"], types["w"])
	}
	m, out := newArray(fl32, 2, 3), newArray(device.Float64, 2)
	for k := range 6 {
		storeFloat(fl32, m.Data, k, float64(k)+0.5)
	}
	if err := Run(p, [3]int{1, 1, 1}, [3]int{2, 1, 1}, []any{m, out}); err != nil {
		t.Fatal(err)
	}
	// row 2: s = 3.5 + 4.5 + 5.5, n = 8, w = s + 0.25
	if got := element(out, 1); got != 13.5+8+13.75 {
		t.Errorf("row 2 gives %v, want %v", got, 13.5+8+13.75)
	}
	// a number parameter's type is the launch's and does not widen
	_, err := translate(t, "return function(x, n)\nn = x[1]\nend", Signature{arr(fl32, 1), intArg}, Options{})
	if err == nil || !strings.Contains(err.Error(), "kernel.lua:2: n is an integer parameter (its argument is an integer) and cannot take a float32; copy it into a local first (local v = n)") {
		t.Errorf("float into an integer parameter: %v", err)
	}
	// nor does a device function's: a float32 argument makes a float32
	// parameter, and the message says so
	env := scriptEnv{"third": deviceFn(t, "return function(q, n)\nq = n / 3\nreturn q\nend", nil)}
	_, err = translateIn(t, "return function(x)\nx[1] = third(x[1], 2)\nend", Scope{Env: env}, Signature{arr(fl32, 1)})
	if err == nil || !strings.Contains(err.Error(), "kernel.lua:2: q is a float32 parameter (its argument is a float32) and cannot take a float64; copy it into a local first (local v = q)") {
		t.Errorf("float64 into a float32 parameter: %v", err)
	}
}

func TestMultipleAssignmentSwapsElementsOfAnyRank(t *testing.T) {
	src := `return function(m)
  local i, j = kernels.grid(2)
  if i < j then
    m[i][j], m[j][i] = m[j][i], m[i][j]
  end
end`
	p := mustTranslate(t, src, Signature{arr(device.Int32, 2)}, Options{})
	m := newArray(device.Int32, 5, 5)
	for k := range 25 {
		storeInt(device.Int32, m.Data, k, int64(k))
	}
	if err := Run(p, [3]int{1, 1, 1}, [3]int{5, 5, 1}, []any{m}); err != nil {
		t.Fatal(err)
	}
	for r := range 5 {
		for c := range 5 {
			if got := int64s(m)[r*5+c]; got != int64(c*5+r) {
				t.Fatalf("m[%d][%d] = %d after the swap, want %d (the transpose)", r+1, c+1, got, c*5+r)
			}
		}
	}
}

// What needs no argument types is refused by kernels.jit, before a launch.
func TestCountsAndShapeIndicesAreCheckedBeforeALaunch(t *testing.T) {
	cases := []struct{ body, want string }{
		{`local i = kernels.grid(2)`, "kernel.lua:2: kernels.grid(2) gives 2 value(s), assigned to 1 name(s)"},
		{`local i, j, k = kernels.gridsize(2)`, "kernel.lua:2: kernels.gridsize(2) gives 2 value(s), assigned to 3 name(s)"},
		{`local i, j = kernels.grid(2), 1`, "kernel.lua:2: kernels.grid(2) gives 2 value(s), assigned to 1 name(s)"},
		{`n, n = kernels.grid(1)`, "kernel.lua:2: kernels.grid(1) gives 1 value(s), assigned to 2 name(s)"},
		{`x[1] = x.shape[n]`, "kernel.lua:2: x.shape[k] needs k to be a number literal"},
	}
	for _, tc := range cases {
		_, err := parseKernel(t, "return function(x, n)\n"+tc.body+"\nend")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.body, err, tc.want)
		}
	}
	if _, err := parseKernel(t, "return function(x, n)\nlocal i, j = kernels.grid(2)\nlocal a, b, c = 1, kernels.grid(2)\nx[1] = x.shape[1]\nend"); err != nil {
		t.Errorf("counts that agree: %v", err)
	}
}

// An atomic's old value is one of the values a local's type joins.
func TestAnAtomicsOldValueWidensALocal(t *testing.T) {
	p := mustTranslate(t, "return function(x)\nlocal n = 0\nn = kernels.atomic_add(x, 1, 1.5)\nx[2] = n\nend", Signature{arr(fl32, 1)}, Options{})
	for _, l := range p.Locals {
		if l.Name == "n" && l.Type != Float32 {
			t.Errorf("n is %s, want float32 (0, then x's old value)", l.Type)
		}
	}
	x := newArray(fl32, 2)
	storeFloat(fl32, x.Data, 0, 2.25)
	if err := Run(p, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []any{x}); err != nil {
		t.Fatal(err)
	}
	if element(x, 0) != 3.75 || element(x, 1) != 2.25 {
		t.Errorf("x = %v, %v; want 3.75 and the old value 2.25", element(x, 0), element(x, 1))
	}
}

// A device function may shuffle: it runs in its caller's lane of the warp.
func TestADeviceFunctionShufflesInItsCallersWarp(t *testing.T) {
	env := scriptEnv{"warpSum": deviceFn(t, `return function(v)
  local o = 16
  while o >= 1 do
    v = v + kernels.shfl_down(v, o)
    o = math.floor(o / 2)
  end
  return v
end`, nil)}
	src := `return function(out)
  local i = kernels.grid(1)
  local s = warpSum(i)
  if kernels.laneid() == 1 then out[math.floor((i - 1) / 32) + 1] = s end
end`
	p := mustTranslateIn(t, src, Scope{Env: env}, Signature{arr(device.Int64, 1)})
	containsAll(t, CUDA(p), []string{"glua_shfl_down("})
	out := newArray(device.Int64, 4)
	if err := Run(p, [3]int{2, 1, 1}, [3]int{64, 1, 1}, []any{out}); err != nil {
		t.Fatal(err)
	}
	for w, got := range int64s(out) {
		first := int64(32*w + 1)
		if want := 32*first + 31*32/2; got != want {
			t.Errorf("warp %d: %d, want %d", w+1, got, want)
		}
	}
}
