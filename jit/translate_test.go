package jit

import (
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

const vectorAdd = `return function(a, b, out, n)
	local i = kernels.grid(1)
	if i <= n then
		out[i] = a[i] + b[i]
	end
end`

const naiveMatmul = `return function(A, B, C)
	local row, col = kernels.grid(2)
	if row <= C.shape[1] and col <= C.shape[2] then
		local tmp = 0.
		for k = 1, A.shape[2] do
			tmp = tmp + A[row][k] * B[k][col]
		end
		C[row][col] = tmp
	end
end`

var fl32 = device.Float32

func TestVectorAddTranslatesToOneGuardedStore(t *testing.T) {
	p := mustTranslate(t, vectorAdd, Signature{arr(fl32, 1), arr(fl32, 1), arr(fl32, 1), intArg}, Options{Name: "vadd"})
	src := CUDA(p)
	containsAll(t, src, []string{
		`extern "C" __global__ void vadd(float* p_a, i64 p_a_n0, float* p_b, i64 p_b_n0, float* p_out, i64 p_out_n0, i64 l0_n)`,
		"i64 l1_i = 0;",
		"l1_i = ((i64)blockIdx.x * blockDim.x + threadIdx.x + 1);",
		"if ((l1_i <= l0_n)) {",
		"p_out[(l1_i - 1)] = (float)((p_a[(l1_i - 1)] + p_b[(l1_i - 1)]));",
	})
	if strings.Contains(src, "glua_in_bounds(glua_err") {
		t.Error("indices are checked without check_bounds")
	}
}

func TestNaiveMatmulComputesInFloat32(t *testing.T) {
	p := mustTranslate(t, naiveMatmul, Signature{arr(fl32, 2), arr(fl32, 2), arr(fl32, 2)}, Options{Name: "matmul"})
	containsAll(t, CUDA(p), []string{
		"float* p_A, i64 p_A_n0, i64 p_A_n1,",
		"float l2_tmp = 0;",
		"l2_tmp = (0e+00f);",
		"for (; f1_i <= f1_stop; f1_i += f1_step) {",
		"l2_tmp = (l2_tmp + (p_A[((l0_row - 1) * p_A_n1 + (l3_k - 1))] * p_B[((l3_k - 1) * p_B_n1 + (l1_col - 1))]));",
		"p_C[((l0_row - 1) * p_C_n1 + (l1_col - 1))] = (float)(l2_tmp);",
	})
}

func TestFloat64OperandMakesFloat64Work(t *testing.T) {
	p := mustTranslate(t, `return function(x, a) local i = kernels.grid(1); x[i] = a * x[i] + 1 end`,
		Signature{arr(fl32, 1), floatArg}, Options{})
	containsAll(t, CUDA(p), []string{"double l0_a)", "((l0_a * ((double)p_x[(l1_i - 1)])) + (1e+00))"})
}

// Each construct of the language, and the line of CUDA C it becomes.
func TestEachConstructTranslates(t *testing.T) {
	sig := Signature{arr(fl32, 1), arr(device.Int32, 1), intArg}
	cases := []struct{ name, body, want string }{
		{"subtraction and unary minus", `x[1] = -(x[2] - x[3])`, "neg_rn((p_x[((2LL) - 1)] - p_x[((3LL) - 1)]))"},
		{"float division of integers", `local h = n / 2; x[1] = h`, "(((double)l0_n) / (2e+00))"},
		{"integer modulo follows Lua", `y[1] = n % 3`, "lua_mod(l0_n, (3LL))"},
		{"power", `x[1] = x[2] ^ 2`, "powf(p_x[((2LL) - 1)], (2e+00f))"},
		{"comparisons", `if n == 1 or n ~= 2 and not (n >= 3) then x[1] = 1 end`, "if (((l0_n == (1LL)) || ((l0_n != (2LL)) && (!(l0_n >= (3LL)))))) {"},
		{"elseif", `if n < 1 then x[1] = 1 elseif n > 2 then x[1] = 2 else x[1] = 3 end`, "else {"},
		{"while and break", `local k = 0; while k < n do k = k + 1; if k > 5 then break end end`, "while ((l1_k < l0_n)) {"},
		{"break", `while true do break end`, "break;"},
		{"return", `if n > 0 then return end`, "return;"},
		{"for with a step", `for k = n, 1, -1 do y[k] = k end`, "f1_step > 0 ? f1_i <= f1_stop : f1_i >= f1_stop"},
		{"float for", `for v = 0.5, 2.5 do x[1] = v end`, "float f1_i = (5e-01f)"},
		{"length", `y[1] = #x`, "((i64)p_x_n0)"},
		{"shape", `y[1] = x.shape[1]`, "p_y[((1LL) - 1)] = (int)(p_x_n0);"},
		{"math functions keep float32", `x[1] = math.sqrt(x[1]) + math.exp(x[2]) + math.log(x[3]) + math.sin(x[4]) + math.cos(x[5])`, "sqrtf(p_x[((1LL) - 1)])"},
		{"math of an integer is float64", `x[1] = math.sqrt(n)`, "sqrt(((double)l0_n))"},
		{"abs min max", `x[1] = math.abs(math.min(x[1], 0.5, x[2]) + math.max(n, 2))`, "lua_abs((lua_min(lua_min(p_x[((1LL) - 1)], (5e-01f)), p_x[((2LL) - 1)]) + ((float)lua_max(l0_n, (2LL)))))"},
		{"floor and ceil give integers, checked", `y[math.floor(x[1])] = math.ceil(x[2])`,
			"p_y[(glua_index(lua_int_checked(glua_err, glua_stop, 1, floor((double)p_x[((1LL) - 1)])), glua_stop) - 1)] = (int)(lua_int_checked(glua_err, glua_stop, 2, ceil((double)p_x[((2LL) - 1)])));"},
		{"floor of an integer quotient needs no check", `y[1] = math.floor(n / 2)`,
			"glua_jit(float* p_x, i64 p_x_n0, int* p_y, i64 p_y_n0, i64 l0_n) {\n    p_y[((1LL) - 1)] = (int)(((i64)floor((double)(((double)l0_n) / (2e+00)))));"},
		{"pi and huge", `x[1] = math.pi; x[2] = math.huge`, "(3.1415927e+00f)"},
		{"float into an integer array saturates", `y[1] = x[1]`, "sat_i32((double)(p_x[((1LL) - 1)]))"},
		{"grid size", `local s = kernels.gridsize(1)`, "((i64)gridDim.x * blockDim.x)"},
		{"grid(2)", `local r, c = kernels.grid(2)`, "((i64)blockIdx.y * blockDim.y + threadIdx.y + 1)"},
		{"shared and syncthreads", `local s = kernels.shared(128, "float32"); s[1] = 1; kernels.syncthreads()`, "__shared__ float s0_s[128];"},
		{"atomic add", `kernels.atomic_add(y, 1, n)`, "glua_atomic_add(&p_y[((1LL) - 1)], (int)(l0_n));"},
		{"a local declared then assigned", `local v; v = x[1]; x[2] = v`, "float l1_v = 0;"},
		{"a swap through luac's temporaries", `local a, b = 1, 2; a, b = b, a`, "i64 l3__assign_1_ = 0;"},
		{"a boolean local", `local ok = n > 1; if ok then x[1] = 1 end`, "bool l1_ok = 0;"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustTranslate(t, "return function(x, y, n)\n"+tc.body+"\nend", sig, Options{})
			containsAll(t, CUDA(p), []string{tc.want})
		})
	}
}

func TestCheckBoundsGuardsEveryAccess(t *testing.T) {
	p := mustTranslate(t, vectorAdd, Signature{arr(fl32, 1), arr(fl32, 1), arr(fl32, 1), intArg}, Options{CheckBounds: true})
	containsAll(t, CUDA(p), []string{
		"i64* glua_err)",
		"if (glua_in_bounds(glua_err, 3, 4, l1_i, p_out_n0, 1, 1, 1, 1, 1, 1)) p_out[(l1_i - 1)] =",
		"(glua_in_bounds(glua_err, 1, 4, l1_i, p_a_n0, 1, 1, 1, 1, 1, 1) ? p_a[(l1_i - 1)] : (glua_stop = true, (float)0))",
		"if (glua_stop) return;",
	})
}

// Each construct outside the language, and what the error says.
func TestRejectedConstructsNameTheLine(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"table constructor", `local t = {}`, "kernel.lua:2: a table constructor is not allowed in a kernel"},
		{"closure", `local f = function() end`, "kernel.lua:2: a closure (function literal) is not allowed in a kernel"},
		{"function definition", `local function f() end`, "kernel.lua:2: a closure (function literal) is not allowed in a kernel"},
		{"call of a Lua function", `print(n)`, "kernel.lua:2: a call of print is not allowed in a kernel (only math and kernels functions)"},
		{"global", `x[1] = g`, "kernel.lua:2: the global or upvalue g is not allowed in a kernel; pass it as a parameter"},
		{"global assignment", `g = 1`, "kernel.lua:2: assignment to the global g is not allowed in a kernel; declare it with local"},
		{"string", `local s = "a"`, "kernel.lua:2: a string is not allowed in a kernel"},
		{"concatenation", `local s = n .. n`, "kernel.lua:2: string concatenation (..) is not allowed in a kernel"},
		{"method call", `x:free()`, "kernel.lua:2: the method call :free() is not allowed in a kernel"},
		{"other math", `x[1] = math.random(x[1])`, "kernel.lua:2: math.random is not allowed in a kernel"},
		{"other kernels function", `kernels.matmul(x, x, x)`, "kernel.lua:2: kernels.matmul is not allowed in a kernel"},
		{"generic for", `for k, v in pairs(x) do end`, "kernel.lua:2: a generic for (for ... in) is not allowed in a kernel"},
		{"repeat", `repeat until true`, "kernel.lua:2: repeat ... until is not allowed in a kernel"},
		{"nil", `local v = nil`, "kernel.lua:2: nil is not allowed in a kernel"},
		{"return value", `return 1`, "kernel.lua:2: a kernel returns nothing"},
		{"field", `x[1] = x.size`, "kernel.lua:2: the field .size is not allowed in a kernel"},
		{"unused value", `math.sqrt(n)`, "kernel.lua:2: the value of math.sqrt is not used"},
		{"syncthreads as a value", `local v = kernels.syncthreads()`, "kernel.lua:2: kernels.syncthreads is a statement in a kernel; it has no value"},
		{"shared size not constant", `local s = kernels.shared(n, "float32")`, "kernel.lua:2: kernels.shared's shape must be known when the kernel is compiled: number literals, or locals of the script holding numbers, not n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseKernel(t, "return function(x, n)\n"+tc.body+"\nend")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "jit: ") {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// Type errors need the signature, and come at the first launch.
func TestTypeErrorsNameTheLine(t *testing.T) {
	sig := Signature{arr(fl32, 2), intArg}
	cases := []struct{ name, body, want string }{
		{"number as condition", `if n then end`, "kernel.lua:2: a condition must be a comparison or a boolean, not integer"},
		{"float into an integer parameter", `n = x[1][1]`, "kernel.lua:2: n is an integer parameter (its argument is an integer) and cannot take a float32; copy it into a local first (local v = n)"},
		{"wrong number of indices", `x[1] = 1`, "kernel.lua:2: x has 2 dimension(s) and is indexed with 1 index(es); write x[i][j]"},
		{"float index", `x[1.5][1] = 1`, "kernel.lua:2: an index of x must be an integer, not float32"},
		{"shape out of range", `local d = x.shape[3]`, "kernel.lua:2: x.shape[k] needs k to be a literal from 1 to 2"},
		{"array as value", `local y = x`, "kernel.lua:2: the array x can only be indexed"},
		{"indexing a number", `n[1] = 1`, "kernel.lua:2: n is not an array parameter or a shared array"},
		{"length of a power", `n = #x ^ 2`, "kernel.lua:2: x ^ 2 is not an array parameter or a shared array"},
		{"indexing a sum", `local v = (n + 1)[2]`, "kernel.lua:2: n + 1 is not an array parameter or a shared array"},
		{"read before assignment", `local v; n = v`, "kernel.lua:2: v is read before it is assigned"},
		{"grid count", `local i = kernels.grid(2)`, "kernel.lua:2: kernels.grid(2) gives 2 value(s), assigned to 1 name(s)"},
		{"atomic on 2-D", `kernels.atomic_add(x, 1, 1)`, "kernel.lua:2: kernels.atomic_add takes a 1-D array"},
		{"bad shared dtype", `local s = kernels.shared(4, "float")`, `kernel.lua:2: kernels.shared: unknown dtype "float"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := translate(t, "return function(x, n)\n"+tc.body+"\nend", sig, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestArgumentCountMismatchIsAnError(t *testing.T) {
	_, err := translate(t, vectorAdd, Signature{arr(fl32, 1)}, Options{})
	if err == nil || !strings.Contains(err.Error(), "kernel.lua:1: the kernel takes 4 arguments (a, b, out, n), got 1") {
		t.Errorf("error %v", err)
	}
}
