// dtypes.cu: what every built-in kernel module starts with. NVRTC compiles
// it without any header (cuda_fp16.h and the C++ standard headers may not
// be on the machine), so the 2-byte float conversions are written out here
// and rounding-exact arithmetic is spelled in inline PTX.
//
// The rules are those of package kernels (doc.go): float32 computes in
// float32, float64 in float64, float16/bfloat16 load to float32 exactly and
// round to nearest even on store, integers compute in integers that wrap
// modulo 2^bits (int32 and uint8 in int, int64 in i64). Each product, sum,
// difference and quotient is rounded on its own: mul.rn/add.rn are never
// contracted into an fma, and div.rn is the correctly rounded division
// whatever NVRTC's --prec-div says. Conversions from a float (a copy, a
// fill) truncate toward zero and saturate, as device.Set does.

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

__device__ inline u32 f32_bits(float f) { u32 b; asm("mov.b32 %0, %1;" : "=r"(b) : "f"(f)); return b; }
__device__ inline float bits_f32(u32 b) { float f; asm("mov.b32 %0, %1;" : "=f"(f) : "r"(b)); return f; }

__device__ inline float mul_rn(float a, float b) { float r; asm("mul.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }
__device__ inline float add_rn(float a, float b) { float r; asm("add.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }
__device__ inline float sub_rn(float a, float b) { float r; asm("sub.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }
__device__ inline float div_rn(float a, float b) { float r; asm("div.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }
__device__ inline double mul_rn(double a, double b) { double r; asm("mul.rn.f64 %0, %1, %2;" : "=d"(r) : "d"(a), "d"(b)); return r; }
__device__ inline double add_rn(double a, double b) { double r; asm("add.rn.f64 %0, %1, %2;" : "=d"(r) : "d"(a), "d"(b)); return r; }
__device__ inline double sub_rn(double a, double b) { double r; asm("sub.rn.f64 %0, %1, %2;" : "=d"(r) : "d"(a), "d"(b)); return r; }
__device__ inline double div_rn(double a, double b) { double r; asm("div.rn.f64 %0, %1, %2;" : "=d"(r) : "d"(a), "d"(b)); return r; }

// The integer compute types' sums, differences and products wrap modulo
// 2^bits, as NumPy's and Go's do. Signed overflow is undefined in C, so
// they are computed in the unsigned type of the same width, where the
// wrap is defined, and converted back, which keeps the low bits (CUDA's
// two's complement). A uint8 computes in int and keeps its low 8 bits on
// store, which is the same ring modulo 2^8; int32 in 32-bit arithmetic,
// never widened.
__device__ inline int add_rn(int a, int b) { return (int)((u32)a + (u32)b); }
__device__ inline int sub_rn(int a, int b) { return (int)((u32)a - (u32)b); }
__device__ inline int mul_rn(int a, int b) { return (int)((u32)a * (u32)b); }
__device__ inline i64 add_rn(i64 a, i64 b) { return (i64)((u64)a + (u64)b); }
__device__ inline i64 sub_rn(i64 a, i64 b) { return (i64)((u64)a - (u64)b); }
__device__ inline i64 mul_rn(i64 a, i64 b) { return (i64)((u64)a * (u64)b); }

// floor_div is NumPy's y // x on integers: the quotient rounded toward
// minus infinity. C's / would trap, or be undefined, for x = 0 and for the
// smallest value over -1; here a division by zero is 0 (NumPy's value) and
// x = -1 negates with the wrap, so the smallest value stays itself. With
// those two out of the way, q·x cannot overflow: |q·x| <= |y|.
__device__ inline int floor_div(int y, int x) {
    if (x == 0) return 0;
    if (x == -1) return (int)(0u - (u32)y);
    int q = y / x;
    return (q * x != y && (y ^ x) < 0) ? q - 1 : q;
}
__device__ inline i64 floor_div(i64 y, i64 x) {
    if (x == 0) return 0;
    if (x == -1) return (i64)(0ull - (u64)y);
    i64 q = y / x;
    return (q * x != y && (y ^ x) < 0) ? q - 1 : q;
}

// float32 -> binary16, round to nearest even; NaN stays NaN (sign|0x7e00),
// as device.Float16Bits. The device's own conversion rounds every other
// value as IEEE 754 says, in one instruction where the same rounding done
// with integers took about twenty, which held float16 arithmetic to 0.87
// of PyTorch's bandwidth on the H100; only NaN, which it would make the
// canonical 0x7fff, is written here.
__device__ inline u16 f32_to_f16(float f) {
    if (f != f) return (u16)(((f32_bits(f) >> 16) & 0x8000u) | 0x7e00u);
    u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

// binary16 -> float32, exact. The device's conversion is exact for every
// number and infinity in one instruction, where decoding with integers
// and branches held float16 arithmetic to 0.87 of PyTorch's bandwidth on
// the H100; a NaN keeps its sign and payload (sign|0x7f800000|mant<<13),
// as device.Float16Value, which the device's conversion does not promise.
// The NaN's bits are h's high byte moved to the top (the sign; the rest
// lands among the exponent's ones) or'd with h << 13 (the payload; the
// exponent and sign bits land among the ones too), and the test is the
// converted value's own: the compiler predicates this on every element,
// and the masks and shifts it replaced made float16's max_abs_diff take
// 0.476 ms against 0.381 for 2^28 elements, and its axis sums 4-6% longer,
// on an H200.
__device__ inline float f16_to_f32(u16 h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    u32 sign;
    asm("prmt.b32 %0, %1, %2, 0x1444;" : "=r"(sign) : "r"((u32)h), "r"(0u));
    u32 nan = sign | 0x7f800000u | ((u32)h << 13);
    return f != f ? bits_f32(nan) : f;
}

// float32 -> bfloat16, round to nearest even; a NaN is kept quiet, as
// device.BFloat16Bits.
__device__ inline u16 f32_to_bf16(float f) {
    u32 b = f32_bits(f);
    if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu)) return (u16)((b >> 16) | 0x40u);
    b += 0x7fffu + ((b >> 16) & 1u);
    return (u16)(b >> 16);
}

__device__ inline float bf16_to_f32(u16 h) { return bits_f32((u32)h << 16); }

// A float converted to an integer (a copy across dtypes, a fill)
// truncates toward zero and saturates; NaN becomes 0.
__device__ inline i64 sat_i64(double v) {
    if (v != v) return 0;
    if (v <= -9223372036854775808.0) return (i64)0x8000000000000000ull;
    if (v >= 9223372036854775808.0) return 0x7fffffffffffffffll;
    return (i64)v;
}
__device__ inline int sat_i32(double v) {
    if (v != v) return 0;
    if (v <= -2147483648.0) return (int)0x80000000u;
    if (v >= 2147483647.0) return 0x7fffffff;
    return (int)v;
}
__device__ inline u8 sat_u8(double v) {
    if (v != v || v <= 0.0) return 0;
    if (v >= 255.0) return 255;
    return (u8)(int)v;
}

// One struct per dtype: S is the stored type, C the type computed in and
// A the type of the number a kernel takes (double for floats, i64 for
// integers). load/store move between S and C; scalar turns a kernel's
// number into C: a float64 rounded, an integer kept modulo 2^bits; wide is
// the exact value as float64 (int64 rounds to nearest, as Go's
// float64(int64) does); from_double converts as device.Set does.
struct F32 {
    typedef float S; typedef float C; typedef double A;
    static __device__ inline C load(S v) { return v; }
    static __device__ inline S store(C v) { return v; }
    static __device__ inline C scalar(A a) { return (float)a; }
    static __device__ inline double wide(S v) { return (double)v; }
    static __device__ inline S from_double(double v) { return (float)v; }
};
struct F64 {
    typedef double S; typedef double C; typedef double A;
    static __device__ inline C load(S v) { return v; }
    static __device__ inline S store(C v) { return v; }
    static __device__ inline C scalar(A a) { return a; }
    static __device__ inline double wide(S v) { return v; }
    // a NaN comes out quiet, as Go's float64 of a float32 (kernels.Copy's
    // conversion) leaves it; the device's float32 -> float64 conversion
    // keeps a signalling NaN signalling
    static __device__ inline S from_double(double v) {
        return v == v ? v : __longlong_as_double(__double_as_longlong(v) | 0x0008000000000000ll);
    }
};
struct F16 {
    typedef u16 S; typedef float C; typedef double A;
    static __device__ inline C load(S v) { return f16_to_f32(v); }
    static __device__ inline S store(C v) { return f32_to_f16(v); }
    static __device__ inline C scalar(A a) { return (float)a; }
    static __device__ inline double wide(S v) { return (double)f16_to_f32(v); }
    static __device__ inline S from_double(double v) { return f32_to_f16((float)v); }
};
// F16Plain is F16 for values known not to be NaN: the device's conversion
// alone, exact for every number and infinity. Elementwise kernels load a
// vector of float16s this way once a few integer operations have shown it
// holds no NaN: rebuilding NaNs' payloads on every load held float16
// arithmetic to 0.95 of PyTorch's bandwidth on an H200, and a standalone
// kernel that skipped it for NaN-free vectors ran at PyTorch's rate.
// Results are stored as F16 stores them, NaN (inf - inf) included.
struct F16Plain : F16 {
    static __device__ inline C load(S v) {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
        return f;
    }
};
struct BF16 {
    typedef u16 S; typedef float C; typedef double A;
    static __device__ inline C load(S v) { return bf16_to_f32(v); }
    static __device__ inline S store(C v) { return f32_to_bf16(v); }
    static __device__ inline C scalar(A a) { return (float)a; }
    static __device__ inline double wide(S v) { return (double)bf16_to_f32(v); }
    static __device__ inline S from_double(double v) { return f32_to_bf16((float)v); }
};
struct I32 {
    typedef int S; typedef int C; typedef i64 A;
    static __device__ inline C load(S v) { return v; }
    static __device__ inline S store(C v) { return v; }
    static __device__ inline C scalar(A a) { return (int)(u32)(u64)a; }
    static __device__ inline double wide(S v) { return (double)v; }
    static __device__ inline S from_double(double v) { return sat_i32(v); }
};
struct I64 {
    typedef i64 S; typedef i64 C; typedef i64 A;
    static __device__ inline C load(S v) { return v; }
    static __device__ inline S store(C v) { return v; }
    static __device__ inline C scalar(A a) { return a; }
    static __device__ inline double wide(S v) { return (double)v; }
    static __device__ inline S from_double(double v) { return sat_i64(v); }
};
struct U8 {
    typedef u8 S; typedef int C; typedef i64 A;
    static __device__ inline C load(S v) { return (int)v; }
    static __device__ inline S store(C v) { return (u8)(u32)v; }
    static __device__ inline C scalar(A a) { return (int)(u8)(u64)a; }
    static __device__ inline double wide(S v) { return (double)v; }
    static __device__ inline S from_double(double v) { return sat_u8(v); }
};

// GLUA_DTYPES(X) applies X(name, traits) to every dtype; entry points are
// named glua_<op>_<name> after it, with the names device.DType prints.
// GLUA_DTYPES_WITH(X, A) applies X(A, name, traits), for a macro that
// needs one more argument than the dtype's.
#define GLUA_DTYPES_WITH(X, A) \
    X(A, float32, F32) X(A, float64, F64) X(A, float16, F16) X(A, bfloat16, BF16) \
    X(A, int32, I32) X(A, int64, I64) X(A, uint8, U8)
#define GLUA_APPLY(X, NAME, T) X(NAME, T)
#define GLUA_DTYPES(X) GLUA_DTYPES_WITH(GLUA_APPLY, X)
// GLUA_FLOAT_DTYPES and GLUA_INT_DTYPES are GLUA_DTYPES split in two, for
// kernels whose integer entry points differ from the float ones.
#define GLUA_FLOAT_DTYPES(X) X(float32, F32) X(float64, F64) X(float16, F16) X(bfloat16, BF16)
#define GLUA_INT_DTYPES(X) X(int32, I32) X(int64, I64) X(uint8, U8)

// v16 is 16 bytes moved by one vector load or store (ld.global.v4.u32);
// declared here rather than taken from uint4 so that no header is needed.
struct alignas(16) v16 { u32 x, y, z, w; };

__device__ inline i64 global_thread() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ inline i64 grid_threads() { return (i64)gridDim.x * blockDim.x; }

// The launch shape every elementwise kernel shares, the built-ins' and
// kernels.map's (kernels.ElementwiseShape chooses the grid): the work is
// units, each a 16-byte vector or one element, and each thread takes U of
// them per round (GLUA_VECTORS_PER_THREAD or GLUA_ELEMENTS_PER_THREAD,
// defined in front of this file by kernels.DtypesSource), unit k of a
// round at units_first<U>() + k * blockDim.x, so that a warp's loads stay
// contiguous; it loads them all before it computes, keeping that many
// loads in flight. When the grid covers the array the loop runs once (the
// one-shot grids PyTorch launches); a grid cut short repeats it with
// units_step<U>().
template <int U, class I>
__device__ inline I units_first() {
    return (I)blockIdx.x * (I)(blockDim.x * U) + (I)threadIdx.x;
}
template <int U, class I>
__device__ inline I units_step() {
    return (I)gridDim.x * (I)(blockDim.x * U);
}

// index32 says whether n elements are indexed with 32-bit unsigned
// integers, which need fewer registers and instructions than i64: a unit
// index stays below n, and a round's step below n plus one round of a
// block (at most 2^16), so their sum stays below 2^32.
__device__ inline bool index32(i64 n) { return n <= 0x7fff0000LL; }
