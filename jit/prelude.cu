// prelude.cu: what every kernel kernels.jit generates starts with. NVRTC
// compiles it without any header, so the conversions of the 2-byte floats
// and the saturating integer stores are written out as in kernels/dtypes.cu,
// and Lua's modulo (the sign of the divisor) is spelled out.

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

__device__ inline u32 f32_bits(float f) { u32 b; asm("mov.b32 %0, %1;" : "=r"(b) : "f"(f)); return b; }
__device__ inline float bits_f32(u32 b) { float f; asm("mov.b32 %0, %1;" : "=f"(f) : "r"(b)); return f; }


// float32 -> binary16, round to nearest even; NaN stays NaN (sign|0x7e00),
// as device.Float16Bits.
__device__ inline u16 f32_to_f16(float f) {
    u32 b = f32_bits(f);
    u32 sign = (b >> 16) & 0x8000u;
    int exp = (int)((b >> 23) & 0xffu);
    u32 mant = b & 0x7fffffu;
    if (exp == 0xff) return (u16)(mant ? (sign | 0x7e00u) : (sign | 0x7c00u));
    int e = exp - 127;
    if (e > 15) return (u16)(sign | 0x7c00u);
    if (e >= -14) {
        u32 m = mant >> 13, rest = mant & 0x1fffu;
        u32 h = sign | ((u32)(e + 15) << 10) | m;
        if (rest > 0x1000u || (rest == 0x1000u && (m & 1u))) h++; // a carry into the exponent is right
        return (u16)h;
    }
    if (e >= -25) {
        mant |= 0x800000u;
        u32 shift = (u32)(-e - 14 + 13);
        u32 m = mant >> shift, rest = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rest > half || (rest == half && (m & 1u))) m++;
        return (u16)(sign | m);
    }
    return (u16)sign;
}

// binary16 -> float32, exact.
__device__ inline float f16_to_f32(u16 h) {
    u32 sign = (u32)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        if (mant == 0) return bits_f32(sign);
        float v = (float)mant / 16777216.0f; // mant * 2^-24, exact
        return sign ? -v : v;
    }
    return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
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

// Integer stores truncate toward zero and saturate; NaN becomes 0.
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

// Lua's a % b: a - floor(a/b)*b, so the result takes the divisor's sign.
__device__ inline i64 lua_mod(i64 a, i64 b) { i64 r = a % b; if (r != 0 && ((r ^ b) < 0)) r += b; return r; }
__device__ inline float lua_mod(float a, float b) { return a - floorf(a / b) * b; }
__device__ inline double lua_mod(double a, double b) { return a - floor(a / b) * b; }

// Lua's math.min and math.max: the first argument unless the second is
// strictly less (greater), whatever NaNs do.
__device__ inline i64 lua_min(i64 a, i64 b) { return b < a ? b : a; }
__device__ inline float lua_min(float a, float b) { return b < a ? b : a; }
__device__ inline double lua_min(double a, double b) { return b < a ? b : a; }
__device__ inline i64 lua_max(i64 a, i64 b) { return b > a ? b : a; }
__device__ inline float lua_max(float a, float b) { return b > a ? b : a; }
__device__ inline double lua_max(double a, double b) { return b > a ? b : a; }
__device__ inline i64 lua_abs(i64 a) { return a < 0 ? -a : a; }
__device__ inline float lua_abs(float a) { return fabsf(a); }
__device__ inline double lua_abs(double a) { return fabs(a); }

// check_bounds: an index tuple (i0..i3 against n0..n3; unused
// dimensions pass 1 and 1) is in bounds, or the first thread out of bounds
// records the array, the line and its indices in err (err[0] is 0 until
// one has) and the caller stops the thread.
__device__ inline bool glua_in_bounds(i64* err, int arr, int line, i64 i0, i64 n0, i64 i1, i64 n1, i64 i2, i64 n2, i64 i3, i64 n3) {
    if (i0 >= 1 && i0 <= n0 && i1 >= 1 && i1 <= n1 && i2 >= 1 && i2 <= n2 && i3 >= 1 && i3 <= n3) return true;
    if (atomicCAS((u64*)err, 0ull, 1ull) == 0ull) {
        err[1] = arr; err[2] = line; err[3] = i0; err[4] = i1; err[5] = i2; err[6] = i3;
    }
    return false;
}
