// prelude.cu: what every kernel kernels.jit generates has after
// kernels/dtypes.cu (the typedefs, the conversions of the 2-byte floats and
// the saturating integer stores, shared with the built-in kernels). NVRTC
// compiles it without any header, so Lua's modulo (the sign of the divisor),
// min, max and abs are spelled out here.

// Integer + - * and unary minus wrap on overflow, as NumPy's int64 and
// the CPU evaluator's do: computed on the unsigned bits, because C leaves
// signed overflow undefined and the optimiser may assume it away (i * i
// would be "known" non-negative).
__device__ inline i64 wrap_add(i64 a, i64 b) { return (i64)((u64)a + (u64)b); }
__device__ inline i64 wrap_sub(i64 a, i64 b) { return (i64)((u64)a - (u64)b); }
__device__ inline i64 wrap_mul(i64 a, i64 b) { return (i64)((u64)a * (u64)b); }
__device__ inline i64 wrap_neg(i64 a) { return (i64)(0ull - (u64)a); }

// Lua's a % b: a - floor(a/b)*b, so the result takes the divisor's sign.
// Any a % -1 is 0 (C leaves the least i64 % -1 undefined).
__device__ inline i64 lua_mod(i64 a, i64 b) { if (b == -1) return 0; i64 r = a % b; if (r != 0 && ((r ^ b) < 0)) r += b; return r; }
__device__ inline float lua_mod(float a, float b) { return a - floorf(a / b) * b; }
__device__ inline double lua_mod(double a, double b) { return a - floor(a / b) * b; }

// An integer a % b whose divisor may be 0: at b == 0 the first thread to
// fail records trap (the operation's number in the program's traps) in
// err, as glua_in_bounds records an index, and sets stop, which ends the
// thread at its next statement; the value meanwhile is 0.
__device__ inline i64 lua_mod_checked(i64* err, bool& stop, int trap, i64 a, i64 b) {
    if (b != 0) return lua_mod(a, b);
    if (atomicCAS((u64*)err, 0ull, 2ull) == 0ull) err[1] = trap;
    stop = true;
    return 0;
}

// math.floor and math.ceil of a float, already rounded: the int64 they
// give, or a trap where v is NaN, an infinity or beyond 2^63 in magnitude.
__device__ inline i64 lua_int_checked(i64* err, bool& stop, int trap, double v) {
    if (v >= -9223372036854775808.0 && v < 9223372036854775808.0) return (i64)v;
    if (atomicCAS((u64*)err, 0ull, 2ull) == 0ull) err[1] = trap;
    stop = true;
    return 0;
}

// glua_index is an index that stopped its thread while it was computed
// (a trap gives 0) made the first element's, so that the access it feeds
// before the statement's stop test stays inside the array. stop is read
// by reference, after i is computed.
__device__ inline i64 glua_index(i64 i, const bool& stop) { return stop ? 1 : i; }

// Lua's math.min and math.max: the first argument unless the second is
// strictly less (greater), whatever NaNs and signed zeros do. For floats
// the comparison and the selection are written in PTX: written in C,
// NVRTC made math.min(0, x) a min instruction, which gives -0 where x is
// -0 and Lua gives 0.
__device__ inline i64 lua_min(i64 a, i64 b) { return b < a ? b : a; }
__device__ inline float lua_min(float a, float b) {
    float r;
    asm("{ .reg .pred p; setp.lt.f32 p, %2, %1; selp.f32 %0, %2, %1, p; }" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
__device__ inline double lua_min(double a, double b) {
    double r;
    asm("{ .reg .pred p; setp.lt.f64 p, %2, %1; selp.f64 %0, %2, %1, p; }" : "=d"(r) : "d"(a), "d"(b));
    return r;
}
__device__ inline i64 lua_max(i64 a, i64 b) { return b > a ? b : a; }
__device__ inline float lua_max(float a, float b) {
    float r;
    asm("{ .reg .pred p; setp.gt.f32 p, %2, %1; selp.f32 %0, %2, %1, p; }" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
__device__ inline double lua_max(double a, double b) {
    double r;
    asm("{ .reg .pred p; setp.gt.f64 p, %2, %1; selp.f64 %0, %2, %1, p; }" : "=d"(r) : "d"(a), "d"(b));
    return r;
}
// map_reduce's "max" and "min" of floats: kernels.maximum's and
// kernels.minimum's rule, NumPy's, where a NaN in either wins.
__device__ inline float np_maximum(float y, float x) { return (y >= x || y != y) ? y : x; }
__device__ inline double np_maximum(double y, double x) { return (y >= x || y != y) ? y : x; }
__device__ inline float np_minimum(float y, float x) { return (y <= x || y != y) ? y : x; }
__device__ inline double np_minimum(double y, double x) { return (y <= x || y != y) ? y : x; }
__device__ inline i64 lua_abs(i64 a) { return a < 0 ? wrap_neg(a) : a; }
// A float negation and an absolute value are arithmetic, as the CPU
// evaluator computes them: a NaN comes out as arithmetic's NaN
// (kernels/nan.go). Written -a and fabsf(a), the compiler would fold them
// into a following conversion between float32 and float64, which then
// makes a NaN of its own: a NaN's sign would depend on how the program
// compiled. A rounded product by -1 and a sum with 0 are exact otherwise
// (-0 included) and are never folded.
__device__ inline float neg_rn(float a) { return mul_rn(a, -1.0f); }
__device__ inline double neg_rn(double a) { return mul_rn(a, -1.0); }
__device__ inline float lua_abs(float a) { return add_rn(fabsf(a), 0.0f); }
__device__ inline double lua_abs(double a) { return add_rn(fabs(a), 0.0); }

// check_bounds: an index tuple (i0..i3 against n0..n3; unused
// dimensions pass 1 and 1) is in bounds, or the first thread out of bounds
// records the array, the line and its indices in err (err[0] is 0 until
// a thread has failed, then 1 for an index, 2 for a trap) and the caller
// stops the thread.
__device__ inline bool glua_in_bounds(i64* err, int arr, int line, i64 i0, i64 n0, i64 i1, i64 n1, i64 i2, i64 n2, i64 i3, i64 n3) {
    if (i0 >= 1 && i0 <= n0 && i1 >= 1 && i1 <= n1 && i2 >= 1 && i2 <= n2 && i3 >= 1 && i3 <= n3) return true;
    if (atomicCAS((u64*)err, 0ull, 1ull) == 0ull) {
        err[1] = arr; err[2] = line; err[3] = i0; err[4] = i1; err[5] = i2; err[6] = i3;
    }
    return false;
}

// math.ldexp, math.frexp and math.modf: the C functions take and give
// their exponent or integer part through an int or a pointer; the kernel
// language's integers are i64, and its two results are two expressions.
// An exponent past +-100000 gives the same result (0 or infinity) as
// itself, and is clamped so that the int conversion cannot wrap it.
__device__ inline int glua_exponent(i64 e) { return (int)(e < -100000 ? -100000 : e > 100000 ? 100000 : e); }
__device__ inline float glua_ldexp(float m, i64 e) { return ldexpf(m, glua_exponent(e)); }
__device__ inline double glua_ldexp(double m, i64 e) { return ldexp(m, glua_exponent(e)); }
__device__ inline float glua_frexp_mant(float x) { int e; return frexpf(x, &e); }
__device__ inline double glua_frexp_mant(double x) { int e; return frexp(x, &e); }
__device__ inline i64 glua_frexp_exp(float x) { int e; frexpf(x, &e); return e; }
__device__ inline i64 glua_frexp_exp(double x) { int e; frexp(x, &e); return e; }
__device__ inline float glua_modf_int(float x) { float i; modff(x, &i); return i; }
__device__ inline double glua_modf_int(double x) { double i; modf(x, &i); return i; }
__device__ inline float glua_modf_frac(float x) { float i; return modff(x, &i); }
__device__ inline double glua_modf_frac(double x) { double i; return modf(x, &i); }

// kernels.atomic_*: each returns the element's old value. CUDA has no
// subtraction of floats or 64-bit integers (an addition of -v is the
// same), no max or min of floats (a compare-and-swap loop, as Numba's:
// a NaN in the element or in v leaves the element as it is, and only a
// strictly greater or smaller v replaces it), and works on 64-bit
// integers as unsigned bits (two's complement: the same sums).
__device__ inline int glua_atomic_add(int* p, int v) { return atomicAdd(p, v); }
__device__ inline i64 glua_atomic_add(i64* p, i64 v) { return (i64)atomicAdd((u64*)p, (u64)v); }
__device__ inline float glua_atomic_add(float* p, float v) { return atomicAdd(p, v); }
__device__ inline double glua_atomic_add(double* p, double v) { return atomicAdd(p, v); }
__device__ inline int glua_atomic_sub(int* p, int v) { return atomicSub(p, v); }
__device__ inline i64 glua_atomic_sub(i64* p, i64 v) { return (i64)atomicAdd((u64*)p, 0ull - (u64)v); }
__device__ inline float glua_atomic_sub(float* p, float v) { return atomicAdd(p, -v); }
__device__ inline double glua_atomic_sub(double* p, double v) { return atomicAdd(p, -v); }
__device__ inline int glua_atomic_max(int* p, int v) { return atomicMax(p, v); }
__device__ inline i64 glua_atomic_max(i64* p, i64 v) { return atomicMax(p, v); }
__device__ inline int glua_atomic_min(int* p, int v) { return atomicMin(p, v); }
__device__ inline i64 glua_atomic_min(i64* p, i64 v) { return atomicMin(p, v); }
// A float's bits and back, for the compare-and-swap loop of max and min.
__device__ inline int glua_bits(float v) { return __float_as_int(v); }
__device__ inline u64 glua_bits(double v) { return (u64)__double_as_longlong(v); }
__device__ inline float glua_unbits(int b, float) { return __int_as_float(b); }
__device__ inline double glua_unbits(u64 b, double) { return __longlong_as_double((i64)b); }
template <typename F>
__device__ inline F glua_atomic_extreme(F* p, F v, bool greater) {
    F old = *(volatile F*)p;
    while (old == old && v == v && (greater ? old < v : old > v)) {
        auto seen = atomicCAS((decltype(glua_bits(v))*)p, glua_bits(old), glua_bits(v));
        if (seen == glua_bits(old)) break;
        old = glua_unbits(seen, v);
    }
    return old;
}
__device__ inline float glua_atomic_max(float* p, float v) { return glua_atomic_extreme(p, v, true); }
__device__ inline double glua_atomic_max(double* p, double v) { return glua_atomic_extreme(p, v, true); }
__device__ inline float glua_atomic_min(float* p, float v) { return glua_atomic_extreme(p, v, false); }
__device__ inline double glua_atomic_min(double* p, double v) { return glua_atomic_extreme(p, v, false); }
__device__ inline int glua_atomic_exch(int* p, int v) { return atomicExch(p, v); }
__device__ inline i64 glua_atomic_exch(i64* p, i64 v) { return (i64)atomicExch((u64*)p, (u64)v); }
__device__ inline float glua_atomic_exch(float* p, float v) { return atomicExch(p, v); }
__device__ inline double glua_atomic_exch(double* p, double v) { return __longlong_as_double((i64)atomicExch((u64*)p, (u64)__double_as_longlong(v))); }
__device__ inline int glua_atomic_cas(int* p, int expected, int v) { return atomicCAS(p, expected, v); }
__device__ inline i64 glua_atomic_cas(i64* p, i64 expected, i64 v) { return (i64)atomicCAS((u64*)p, (u64)expected, (u64)v); }

// Warp primitives, over every lane of the warp (mask 0xffffffff). A
// source past the warp's 32 lanes gives a lane its own value, as CUDA
// does; an offset or mask that is negative or over 32 is made 32, which
// takes every source past the warp, so that the int conversion cannot
// wrap it into range.
__device__ inline unsigned glua_lane_offset(i64 d) { return d < 0 || d > 32 ? 32u : (unsigned)d; }
__device__ inline i64 glua_shfl_down(i64 v, i64 d) { return __shfl_down_sync(0xffffffffu, v, glua_lane_offset(d)); }
__device__ inline float glua_shfl_down(float v, i64 d) { return __shfl_down_sync(0xffffffffu, v, glua_lane_offset(d)); }
__device__ inline double glua_shfl_down(double v, i64 d) { return __shfl_down_sync(0xffffffffu, v, glua_lane_offset(d)); }
__device__ inline i64 glua_shfl_xor(i64 v, i64 m) { return __shfl_xor_sync(0xffffffffu, v, (int)glua_lane_offset(m)); }
__device__ inline float glua_shfl_xor(float v, i64 m) { return __shfl_xor_sync(0xffffffffu, v, (int)glua_lane_offset(m)); }
__device__ inline double glua_shfl_xor(double v, i64 m) { return __shfl_xor_sync(0xffffffffu, v, (int)glua_lane_offset(m)); }
// kernels.laneid(): the thread's linear index in its block (x fastest)
// modulo 32, 1-based.
__device__ inline i64 glua_laneid() { return (i64)((threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y) % 32) + 1; }
