package jit

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
)

// cudaBuiltins are the names generated code calls that NVRTC itself
// provides (CUDA's math library and intrinsics) and the C keywords a call
// pattern also matches.
var cudaBuiltins = map[string]bool{
	"if": true, "for": true, "while": true, "return": true,
	"sqrt": true, "sqrtf": true, "exp": true, "expf": true, "log": true, "logf": true,
	"sin": true, "sinf": true, "cos": true, "cosf": true, "floor": true, "ceil": true,
	"pow": true, "powf": true, "atomicAdd": true, "__syncthreads": true, "__syncwarp": true,
	"__int_as_float": true, "__longlong_as_double": true,
}

func init() {
	// the rest of CUDA's math library the kernel language calls, in
	// double and single precision
	for _, f := range []string{"acos", "asin", "atan", "atan2", "cosh", "fmod", "log10", "sinh", "tan", "tanh"} {
		cudaBuiltins[f], cudaBuiltins[f+"f"] = true, true
	}
}

// TestGeneratedCUDACallsOnlyWhatThePreludeDefines translates kernels that
// use every helper the emitter writes (2-byte floats in and out,
// saturating stores, Lua's %, abs, min, max, floor, checked indices, an
// int64 atomic, wrapping integer arithmetic, a % that may divide by zero)
// and finds each name the generated code calls or casts to defined by the
// prelude, which is kernels.DtypesSource() followed by prelude.cu, in
// that order.
func TestGeneratedCUDACallsOnlyWhatThePreludeDefines(t *testing.T) {
	if !strings.Contains(prelude, kernels.DtypesSource()) {
		t.Fatal("the prelude does not hold the kernels package's dtypes source")
	}
	if strings.Count(prelude, "__device__ inline u16 f32_to_f16(float f)") != 1 {
		t.Error("f32_to_f16 is not defined exactly once in the prelude")
	}
	if i, j := strings.Index(prelude, "typedef long long i64;"), strings.Index(prelude, "lua_mod("); i < 0 || j < 0 || i > j {
		t.Error("the typedefs must come before prelude.cu's helpers, which use them")
	}
	defined := PreludeNames()
	kernelsSrc := []struct {
		src string
		sig Signature
		o   Options
	}{
		{`return function(h, b, x, i32, u, i64)
			local i = kernels.grid(1)
			h[i] = h[i] * 2 + b[i]
			b[i] = x[i] % 3.0
			i32[i] = math.abs(x[i]) + math.min(x[i], 1.0)
			u[i] = math.max(x[i], 0.5)
			i64[i] = math.floor(x[i]) % 7 + math.abs(i64[i]) + math.min(i64[i], 2) + math.max(i64[i], 3)
			i64[math.ceil(x[i])] = x[i] / 3
			kernels.atomic_add(i64, 1, 1)
		end`, Signature{arr(device.Float16, 1), arr(device.BFloat16, 1), arr(device.Float64, 1), arr(device.Int32, 1), arr(device.Uint8, 1), arr(device.Int64, 1)}, Options{CheckBounds: true}},
		{`return function(x, y) local i = kernels.grid(1); y[i] = math.sqrt(x[i]) ^ 2 + math.ceil(x[i]) end`,
			Signature{arr(fl32, 1), arr(device.Int32, 1)}, Options{}},
		{`return function(x, y)
			local i = kernels.grid(1)
			local m, e = math.frexp(x[i])
			local a, b = math.modf(y[i])
			x[i] = math.acos(x[i]) + math.asin(x[i]) + math.atan(x[i]) + math.atan2(x[i], 2) + math.cosh(x[i]) + math.fmod(x[i], 3) + math.log10(x[i])
			y[i] = math.sinh(y[i]) + math.tan(y[i]) + math.tanh(y[i]) + math.ldexp(m, e) + a + b + math.deg(y[i]) + math.rad(y[i]) + math.pow(y[i], 2)
		end`, Signature{arr(fl32, 1), arr(device.Float64, 1)}, Options{}},
		{`return function(f, d, i32, i64)
			local i = kernels.grid(1)
			local a = kernels.atomic_add(f, 1, 1)
			a = a + kernels.shfl_down(f[i], 1) + kernels.shfl_xor(d[i], 1) + kernels.laneid()
			kernels.atomic_sub(d, 1, a)
			kernels.atomic_max(i32, 1, kernels.shfl_down(i, 2))
			kernels.atomic_min(i64, 1, kernels.shfl_xor(i, 2))
			kernels.syncwarp()
			kernels.atomic_exch(f, 2, 1)
			kernels.atomic_cas(i32, 2, 0, 1)
		end`, Signature{arr(fl32, 1), arr(device.Float64, 1), arr(device.Int32, 1), arr(device.Int64, 1)}, Options{}},
		{`return function(y, n) local i = kernels.grid(1); y[i] = -(i * i - n) % n end`,
			Signature{arr(device.Int64, 1), intArg}, Options{}},
	}
	called := map[string]bool{}
	calls := regexp.MustCompile(`\b([A-Za-z_]\w*)\(`)
	casts := regexp.MustCompile(`\(\(?([a-z]\w*)\*?\)`)
	for _, k := range kernelsSrc {
		src := CUDA(mustTranslate(t, k.src, k.sig, k.o))
		body := src[strings.Index(src, `extern "C"`):]
		for _, m := range calls.FindAllStringSubmatch(body, -1) {
			called[m[1]] = true
			if name := m[1]; !defined[name] && !cudaBuiltins[name] && name != "glua_jit" {
				t.Errorf("the generated code calls %s, which the prelude does not define", name)
			}
		}
		for _, m := range casts.FindAllStringSubmatch(body, -1) {
			switch name := m[1]; name {
			case "float", "double", "int", "bool", "glua_stop": // C's types; `if (glua_stop)` is no cast
			default:
				if !defined[name] && !regexp.MustCompile(`^l\d+_`).MatchString(name) { // f(l1_x) is no cast
					t.Errorf("the generated code uses the type %s, which the prelude does not define", name)
				}
			}
		}
	}
	// The kernels above are meant to reach every helper; a helper the
	// emitter stops using can leave this list.
	for _, helper := range []string{"f32_to_f16", "f16_to_f32", "f32_to_bf16", "bf16_to_f32", "sat_i32", "sat_i64", "sat_u8",
		"lua_mod", "lua_abs", "lua_min", "lua_max", "glua_in_bounds",
		"wrap_add", "wrap_sub", "wrap_mul", "wrap_neg", "lua_mod_checked", "lua_int_checked", "glua_index",
		"glua_ldexp", "glua_frexp_mant", "glua_frexp_exp", "glua_modf_int", "glua_modf_frac",
		"glua_atomic_add", "glua_atomic_sub", "glua_atomic_max", "glua_atomic_min", "glua_atomic_exch", "glua_atomic_cas",
		"glua_shfl_down", "glua_shfl_xor", "glua_laneid"} {
		if !called[helper] {
			t.Errorf("no test kernel calls %s", helper)
		}
	}
}
