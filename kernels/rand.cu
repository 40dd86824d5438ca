// rand.cu: uniform [0, 1) and standard normal values by the counter-based
// formulas of kernels.Rand and kernels.RandN: element i is splitmix64's
// finalizer applied to seed*golden + offset + i, its top bits scaled by a
// power of two (rand), or normal values made from them (randn: the normal
// quantile in float64 for float64, Box–Muller in float32 on pairs of
// counters for the other dtypes). Every
// step is exact or rounded as IEEE 754 says, so the bits equal the Go
// implementation's. rand's divisions are by powers of two, hence exact.

__device__ inline u64 mix64(u64 z) {
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z;
}

#define GLUA_GOLDEN 0x9E3779B97F4A7C15ull

extern "C" __global__ void glua_rand_float64(double* x, i64 n, u64 seed, u64 offset) {
    u64 base = seed * GLUA_GOLDEN + offset;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) x[i] = (double)(mix64(base + (u64)i) >> 11) / 9007199254740992.0;
}

extern "C" __global__ void glua_rand_float32(float* x, i64 n, u64 seed, u64 offset) {
    u64 base = seed * GLUA_GOLDEN + offset;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) x[i] = (float)(mix64(base + (u64)i) >> 40) / 16777216.0f;
}

extern "C" __global__ void glua_rand_float16(u16* x, i64 n, u64 seed, u64 offset) {
    u64 base = seed * GLUA_GOLDEN + offset;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) x[i] = f32_to_f16((float)(mix64(base + (u64)i) >> 53) / 2048.0f);
}

extern "C" __global__ void glua_rand_bfloat16(u16* x, i64 n, u64 seed, u64 offset) {
    u64 base = seed * GLUA_GOLDEN + offset;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) x[i] = f32_to_bf16((float)(mix64(base + (u64)i) >> 56) / 256.0f);
}

// randn of float64: z = the normal quantile (Wichura's AS 241) of u =
// (h>>12 + 1/2) · 2^-52, in float64. Nothing here comes from a math
// library, whose log and sqrt need not round as Go's do: every product,
// sum and quotient is one mul_rn, add_rn, sub_rn or div_rn, the square
// root is sqrt.rn (correctly rounded, as Go's math.Sqrt), and the log is
// fdlibm's, in the same order of operations as kernels.logUnit. The
// constants are those of randn.go, literal for literal (a Go test reads
// them from this file).

#define GLUA_AS241_SPLIT1 0.425
#define GLUA_AS241_CONST1 0.180625
#define GLUA_AS241_SPLIT2 5.0
#define GLUA_AS241_CONST2 1.6
#define GLUA_SQRT_HALF 0.70710678118654752440
#define GLUA_LN2_HI 6.93147180369123816490e-01
#define GLUA_LN2_LO 1.90821492927058770002e-10
#define GLUA_LOG_L1 6.666666666666735130e-01
#define GLUA_LOG_L2 3.999999999940941908e-01
#define GLUA_LOG_L3 2.857142874366239149e-01
#define GLUA_LOG_L4 2.222219843214978396e-01
#define GLUA_LOG_L5 1.818357216161805012e-01
#define GLUA_LOG_L6 1.531383769920937332e-01
#define GLUA_LOG_L7 1.479819860511658591e-01

// Highest degree first: numerator and denominator of the centre, of the
// tail (r <= 5) and of the far tail.
__constant__ double glua_as241[6][8] = {
    {2509.0809287301226727, 33430.575583588128105, 67265.770927008700853, 45921.953931549871457,
     13731.693765509461125, 1971.5909503065514427, 133.14166789178437745, 3.387132872796366608},
    {5226.495278852854561, 28729.085735721942674, 39307.89580009271061, 21213.794301586595867,
     5394.1960214247511077, 687.1870074920579083, 42.313330701600911252, 1.0},
    {7.7454501427834140764e-4, 0.0227238449892691845833, 0.24178072517745061177, 1.27045825245236838258,
     3.64784832476320460504, 5.7694972214606914055, 4.6303378461565452959, 1.42343711074968357734},
    {1.05075007164441684324e-9, 5.475938084995344946e-4, 0.0151986665636164571966, 0.14810397642748007459,
     0.68976733498510000455, 1.6763848301838038494, 2.05319162663775882187, 1.0},
    {2.01033439929228813265e-7, 2.71155556874348757815e-5, 0.0012426609473880784386, 0.026532189526576123093,
     0.29656057182850489123, 1.7848265399172913358, 5.4637849111641143699, 6.6579046435011037772},
    {2.04426310338993978564e-15, 1.4215117583164458887e-7, 1.8463183175100546818e-5, 7.868691311456132591e-4,
     0.0148753612908506148525, 0.13692988092273580531, 0.59983220655588793769, 1.0},
};

__device__ inline u64 f64_bits(double f) { u64 b; asm("mov.b64 %0, %1;" : "=l"(b) : "d"(f)); return b; }
__device__ inline double bits_f64(u64 b) { double f; asm("mov.b64 %0, %1;" : "=d"(f) : "l"(b)); return f; }
__device__ inline double sqrt_rn(double a) { double r; asm("sqrt.rn.f64 %0, %1;" : "=d"(r) : "d"(a)); return r; }

__device__ inline double horner8(const double* c, double x) {
    double p = c[0];
#pragma unroll
    for (int i = 1; i < 8; i++) p = add_rn(mul_rn(p, x), c[i]);
    return p;
}

// log_unit is log(x) for a normal x in (0, 1), as kernels.logUnit.
__device__ inline double log_unit(double x) {
    u64 b = f64_bits(x);
    i64 ki = (i64)(b >> 52) - 1022;
    double f1 = bits_f64((b & 0xFFFFFFFFFFFFFull) | (1022ull << 52));
    if (f1 < GLUA_SQRT_HALF) {
        f1 = mul_rn(f1, 2.0);
        ki--;
    }
    double f = sub_rn(f1, 1.0);
    double k = (double)ki;
    double s = div_rn(f, add_rn(2.0, f));
    double s2 = mul_rn(s, s);
    double s4 = mul_rn(s2, s2);
    double t1 = mul_rn(s2, add_rn(GLUA_LOG_L1, mul_rn(s4, add_rn(GLUA_LOG_L3, mul_rn(s4, add_rn(GLUA_LOG_L5, mul_rn(s4, GLUA_LOG_L7)))))));
    double t2 = mul_rn(s4, add_rn(GLUA_LOG_L2, mul_rn(s4, add_rn(GLUA_LOG_L4, mul_rn(s4, GLUA_LOG_L6)))));
    double R = add_rn(t1, t2);
    double hfsq = mul_rn(mul_rn(0.5, f), f);
    return sub_rn(mul_rn(k, GLUA_LN2_HI), sub_rn(sub_rn(hfsq, add_rn(mul_rn(s, add_rn(hfsq, R)), mul_rn(k, GLUA_LN2_LO))), f));
}

// normal_at is the normal value of counter c, as kernels.normalAt.
__device__ inline double normal_at(u64 c) {
    double u = ((double)(mix64(c) >> 12) + 0.5) / 4503599627370496.0;
    double q = sub_rn(u, 0.5);
    double aq = q < 0.0 ? -q : q;
    if (aq <= GLUA_AS241_SPLIT1) {
        double r = sub_rn(GLUA_AS241_CONST1, mul_rn(q, q));
        return div_rn(mul_rn(q, horner8(glua_as241[0], r)), horner8(glua_as241[1], r));
    }
    double r = q > 0.0 ? sub_rn(1.0, u) : u;
    r = sqrt_rn(-log_unit(r));
    double z;
    if (r <= GLUA_AS241_SPLIT2) {
        r = sub_rn(r, GLUA_AS241_CONST2);
        z = div_rn(horner8(glua_as241[2], r), horner8(glua_as241[3], r));
    } else {
        r = sub_rn(r, GLUA_AS241_SPLIT2);
        z = div_rn(horner8(glua_as241[4], r), horner8(glua_as241[5], r));
    }
    return q < 0.0 ? -z : z;
}

extern "C" __global__ void glua_randn_float64(double* x, i64 n, u64 seed, u64 offset) {
    u64 base = seed * GLUA_GOLDEN + offset;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) x[i] = normal_at(base + (u64)i);
}

// randn of float32, float16 and bfloat16: kernels.normal32Pair, in
// float32, each operation rounded as it is there: Box–Muller on two
// 24-bit uniforms from the hash of pair q = c/2, r = √(-2·log u1) and
// the angle's sin and cos by sincos_turn. glua_randn32 holds
// kernels.normal32Bits, word for word (a Go test reads it from this
// file): the constants as bits, so that no decimal conversion differs.
__constant__ u32 glua_randn32[15] = {
    0xb816e42du, 0x3b233002u, 0xbda55ddfu, 0x3f490fdbu,
    0x366d6618u, 0xb9aae4f0u, 0x3c81e0f4u, 0xbe9de9e6u,
    0x3f3504f3u, 0x3f317180u, 0x3717f7d1u, 0x3f2aaaaau, 0x3eccce13u, 0x3e91e9eeu, 0x3e789e26u,
};

// Indices into glua_randn32, as kernels's n32*.
#define GLUA_N32_SIN 0
#define GLUA_N32_COS 4
#define GLUA_N32_SQRT_HALF 8
#define GLUA_N32_LN2_HI 9
#define GLUA_N32_LN2_LO 10
#define GLUA_N32_LG1 11

__device__ inline float n32(int i) { return __uint_as_float(glua_randn32[i]); }
__device__ inline float sqrt_rn(float a) { float r; asm("sqrt.rn.f32 %0, %1;" : "=f"(r) : "f"(a)); return r; }
// fma_rn is a·b + c rounded once, as kernels.fma32.
__device__ inline float fma_rn(float a, float b, float c) { float r; asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a), "f"(b), "f"(c)); return r; }

// log_unit32 is log(x) for a normal float32 x in (0, 1], as
// kernels.logUnit32.
__device__ inline float log_unit32(float x) {
    u32 b = __float_as_uint(x);
    int ki = (int)(b >> 23) - 126;
    float f1 = __uint_as_float((b & 0x7FFFFFu) | (126u << 23));
    if (f1 < n32(GLUA_N32_SQRT_HALF)) {
        f1 = mul_rn(f1, 2.0f);
        ki--;
    }
    float f = sub_rn(f1, 1.0f);
    float k = (float)ki;
    float s = div_rn(f, add_rn(2.0f, f));
    float z = mul_rn(s, s);
    float w = mul_rn(z, z);
    float t2 = mul_rn(z, fma_rn(w, n32(GLUA_N32_LG1 + 2), n32(GLUA_N32_LG1)));
    float R = fma_rn(w, fma_rn(w, n32(GLUA_N32_LG1 + 3), n32(GLUA_N32_LG1 + 1)), t2);
    float hfsq = mul_rn(mul_rn(0.5f, f), f);
    return fma_rn(k, n32(GLUA_N32_LN2_HI),
                  -sub_rn(sub_rn(hfsq, fma_rn(s, add_rn(hfsq, R), mul_rn(k, n32(GLUA_N32_LN2_LO)))), f));
}

// sincos_turn is sin and cos of 2π·k/2^24 for k < 2^24, as
// kernels.sinCosTurn: j quarter turns and x = (k - j·2^22)·2^-21 eighths,
// both exact.
__device__ inline void sincos_turn(u32 k, float& sin_out, float& cos_out) {
    u32 j = (k + (1u << 21)) >> 22;
    float x = mul_rn((float)((int)k - (int)(j << 22)), __uint_as_float(0x35000000u)); // · 2^-21, exact
    float x2 = mul_rn(x, x);
    float s = n32(GLUA_N32_SIN), c = n32(GLUA_N32_COS);
#pragma unroll
    for (int i = 1; i < 4; i++) {
        s = fma_rn(s, x2, n32(GLUA_N32_SIN + i));
        c = fma_rn(c, x2, n32(GLUA_N32_COS + i));
    }
    s = mul_rn(s, x);
    c = fma_rn(c, x2, 1.0f);
    switch (j & 3) {
    case 0: sin_out = s; cos_out = c; break;
    case 1: sin_out = c; cos_out = -s; break;
    case 2: sin_out = -s; cos_out = -c; break;
    default: sin_out = -c; cos_out = s; break;
    }
}

// normal32_pair is the pair of float32 normal values of pair q, as
// kernels.normal32Pair.
__device__ inline void normal32_pair(u64 q, float& z0, float& z1) {
    u64 h = mix64(q);
    float u1 = mul_rn((float)(u32)((h >> 40) + 1), __uint_as_float(0x33800000u)); // · 2^-24, exact
    float r = sqrt_rn(mul_rn(-2.0f, log_unit32(u1)));
    float s, c;
    sincos_turn((u32)(h >> 16) & 0xFFFFFFu, s, c);
    z0 = mul_rn(r, c);
    z1 = mul_rn(r, s);
}

// The stores of randn32_fill: a dtype's element, the rounding from
// float32, and two elements as one word (the first at the lower address)
// that a single aligned store writes.
struct randn_f32 {
    typedef float T; typedef u64 T2;
    __device__ static float of(float v) { return v; }
    __device__ static u64 two(float a, float b) { return (u64)__float_as_uint(a) | ((u64)__float_as_uint(b) << 32); }
};
struct randn_f16 {
    typedef u16 T; typedef u32 T2;
    __device__ static u16 of(float v) { return f32_to_f16(v); }
    __device__ static u32 two(u16 a, u16 b) { return (u32)a | ((u32)b << 16); }
};
struct randn_bf16 {
    typedef u16 T; typedef u32 T2;
    __device__ static u16 of(float v) { return f32_to_bf16(v); }
    __device__ static u32 two(u16 a, u16 b) { return (u32)a | ((u32)b << 16); }
};

// randn32_fill writes element i of x from counter base + i. Each thread
// makes whole pairs and stores both halves at once where the first half's
// address is aligned for two; an element whose pair-mate lies outside the
// range (the first when base is odd, the last when the rest is odd) is
// thread 0's, alone.
template <typename D>
__device__ inline void randn32_fill(typename D::T* x, i64 n, u64 seed, u64 offset) {
    typedef typename D::T T;
    typedef typename D::T2 T2;
    u64 base = seed * GLUA_GOLDEN + offset;
    i64 head = n > 0 ? (i64)(base & 1) : 0;
    i64 pairs = (n - head) >> 1;
    T* y = x + head;
    u64 q0 = (base + (u64)head) >> 1;
    bool whole = ((u64)y & (sizeof(T2) - 1)) == 0;
    i64 stride = grid_threads();
    for (i64 p = global_thread(); p < pairs; p += stride) {
        float z0, z1;
        normal32_pair(q0 + (u64)p, z0, z1);
        if (whole) {
            reinterpret_cast<T2*>(y)[p] = D::two(D::of(z0), D::of(z1));
        } else {
            y[2 * p] = D::of(z0);
            y[2 * p + 1] = D::of(z1);
        }
    }
    if (global_thread() == 0) {
        float z0, z1;
        if (head) {
            normal32_pair(base >> 1, z0, z1);
            x[0] = D::of(z1);
        }
        if (head + 2 * pairs < n) {
            normal32_pair((base + (u64)(n - 1)) >> 1, z0, z1);
            x[n - 1] = D::of(z0);
        }
    }
}

extern "C" __global__ void glua_randn_float32(float* x, i64 n, u64 seed, u64 offset) {
    randn32_fill<randn_f32>(x, n, seed, offset);
}

extern "C" __global__ void glua_randn_float16(u16* x, i64 n, u64 seed, u64 offset) {
    randn32_fill<randn_f16>(x, n, seed, offset);
}

extern "C" __global__ void glua_randn_bfloat16(u16* x, i64 n, u64 seed, u64 offset) {
    randn32_fill<randn_bf16>(x, n, seed, offset);
}
