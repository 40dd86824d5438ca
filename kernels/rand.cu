// rand.cu: uniform [0, 1) and standard normal values by the counter-based
// formulas of kernels.Rand and kernels.RandN: element i is splitmix64's
// finalizer applied to seed*golden + offset + i, its top bits scaled by a
// power of two (rand), or the normal quantile of a uniform made from them
// (randn: in float64 for float64, in float32 for the other dtypes). Every
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

// randn of float32, float16 and bfloat16: kernels.normal32At, in float32,
// each operation rounded as it is there: the uniform v = (2k + 1)·2^-25
// from 23 bits of the hash, z = ±√2·erfinv(1 - 2v) by Giles's
// polynomials, the sign from the hash's top bit. glua_randn32 holds
// kernels.normal32Bits, word for word (a Go test reads it from this
// file): the constants as bits, so that no decimal conversion differs.
__constant__ u32 glua_randn32[26] = {
    0x32f16588u, 0x34b84b36u, 0xb66c7357u, 0xb6935ac1u, 0x396532dbu, 0xbaa45408u, 0xbb88e4efu, 0x3e7c8f63u, 0x3fc02e2fu,
    0xb951f09bu, 0x38d3b56bu, 0x3ab0dc72u, 0xbb70bde7u, 0x3bbc127bu, 0xbbf9c5d7u, 0x3c1aa57eu, 0x3f8036dbu, 0x40354f7eu,
    0x3fb504f3u, 0x3f3504f3u, 0x3f317180u, 0x3717f7d1u, 0x3f2aaaaau, 0x3eccce13u, 0x3e91e9eeu, 0x3e789e26u,
};

// Indices into glua_randn32, as kernels's erfinvCentre and n32*.
#define GLUA_N32_TAIL 9
#define GLUA_N32_SQRT2 18
#define GLUA_N32_SQRT_HALF 19
#define GLUA_N32_LN2_HI 20
#define GLUA_N32_LN2_LO 21
#define GLUA_N32_LG1 22

__device__ inline float n32(int i) { return __uint_as_float(glua_randn32[i]); }
__device__ inline float sqrt_rn(float a) { float r; asm("sqrt.rn.f32 %0, %1;" : "=f"(r) : "f"(a)); return r; }

// horner9 is the degree-8 polynomial whose coefficients start at
// glua_randn32[at], at w, as kernels.horner32.
__device__ inline float horner9(int at, float w) {
    float p = n32(at);
#pragma unroll
    for (int i = 1; i < 9; i++) p = add_rn(mul_rn(p, w), n32(at + i));
    return p;
}

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
    float t1 = mul_rn(w, add_rn(n32(GLUA_N32_LG1 + 1), mul_rn(w, n32(GLUA_N32_LG1 + 3))));
    float t2 = mul_rn(z, add_rn(n32(GLUA_N32_LG1), mul_rn(w, n32(GLUA_N32_LG1 + 2))));
    float R = add_rn(t1, t2);
    float hfsq = mul_rn(mul_rn(0.5f, f), f);
    return sub_rn(mul_rn(k, n32(GLUA_N32_LN2_HI)),
                  sub_rn(sub_rn(hfsq, add_rn(mul_rn(s, add_rn(hfsq, R)), mul_rn(k, n32(GLUA_N32_LN2_LO)))), f));
}

// normal32_at is the float32 normal value of counter c, as
// kernels.normal32At.
__device__ inline float normal32_at(u64 c) {
    u64 h = mix64(c);
    float v = mul_rn((float)(u32)(((h >> 40) & 0x7FFFFFull) * 2 + 1), __uint_as_float(0x33000000u)); // · 2^-25, exact
    float x = sub_rn(1.0f, mul_rn(2.0f, v));
    float w = -log_unit32(mul_rn(mul_rn(4.0f, v), sub_rn(1.0f, v)));
    float p;
    if (w < 5.0f) {
        p = horner9(0, sub_rn(w, 2.5f));
    } else {
        p = horner9(GLUA_N32_TAIL, sub_rn(sqrt_rn(w), 3.0f));
    }
    float z = mul_rn(mul_rn(p, x), n32(GLUA_N32_SQRT2));
    return (h >> 63) ? -z : z;
}

extern "C" __global__ void glua_randn_float32(float* x, i64 n, u64 seed, u64 offset) {
    u64 base = seed * GLUA_GOLDEN + offset;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) x[i] = normal32_at(base + (u64)i);
}

extern "C" __global__ void glua_randn_float16(u16* x, i64 n, u64 seed, u64 offset) {
    u64 base = seed * GLUA_GOLDEN + offset;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) x[i] = f32_to_f16(normal32_at(base + (u64)i));
}

extern "C" __global__ void glua_randn_bfloat16(u16* x, i64 n, u64 seed, u64 offset) {
    u64 base = seed * GLUA_GOLDEN + offset;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) x[i] = f32_to_bf16(normal32_at(base + (u64)i));
}
