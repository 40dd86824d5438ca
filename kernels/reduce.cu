// reduce.cu: sum, sum of squares (norm) and max |x - y|, in two passes so
// that the result is the same every time for a given n: the host launches
// a grid that depends only on n, each block of GLUA_REDUCE_THREADS threads
// accumulates its grid-stride share in a fixed order, reduces it through
// shared memory in a fixed tree and writes one partial; then one block of
// GLUA_FINISH_THREADS threads combines the partials the same way. Loads
// stay scalar (not 16-byte vectors) so that the order of summation does
// not depend on the array's alignment.
//
// Floats accumulate in float64. Integers are exact: a sum accumulates in
// 64 bits modulo 2^64 (u64, where the wrap is defined; the host reads the
// result as an int64), and max |x - y| is taken in u64, where every
// difference of two int64s fits; so any order gives the Go reference's
// bits.

#define GLUA_REDUCE_THREADS 256
#define GLUA_FINISH_THREADS 1024

// max with NaN winning, as kernels.MaxAbsDiff wants.
__device__ inline double max_nan(double p, double q) {
    if (p != p) return p;
    if (q != q) return q;
    return p > q ? p : q;
}

__device__ inline double sum_of(double p, double q) { return add_rn(p, q); }
__device__ inline u64 sum_of(u64 p, u64 q) { return p + q; }
__device__ inline double max_of(double p, double q) { return max_nan(p, q); }
__device__ inline u64 max_of(u64 p, u64 q) { return p > q ? p : q; }

template <int N, class V>
__device__ inline V block_sum(V* s, V v) {
    int t = threadIdx.x;
    s[t] = v;
    __syncthreads();
    for (int w = N / 2; w > 0; w >>= 1) {
        if (t < w) s[t] = sum_of(s[t], s[t + w]);
        __syncthreads();
    }
    return s[0];
}

template <int N, class V>
__device__ inline V block_max(V* s, V v) {
    int t = threadIdx.x;
    s[t] = v;
    __syncthreads();
    for (int w = N / 2; w > 0; w >>= 1) {
        if (t < w) s[t] = max_of(s[t], s[t + w]);
        __syncthreads();
    }
    return s[0];
}

template <class T>
__device__ inline void sum_partial(const typename T::S* x, i64 n, int square, double* partials) {
    __shared__ double s[GLUA_REDUCE_THREADS];
    double acc = 0.0;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) {
        double v = T::wide(x[i]);
        if (square) v = mul_rn(v, v);
        acc = add_rn(acc, v);
    }
    double total = block_sum<GLUA_REDUCE_THREADS>(s, acc);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

template <class T>
__device__ inline void isum_partial(const typename T::S* x, i64 n, u64* partials) {
    __shared__ u64 s[GLUA_REDUCE_THREADS];
    u64 acc = 0;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) acc += (u64)(i64)x[i];
    u64 total = block_sum<GLUA_REDUCE_THREADS>(s, acc);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

template <class T>
__device__ inline void imaxabsdiff_partial(const typename T::S* x, const typename T::S* y, i64 n, u64* partials) {
    __shared__ u64 s[GLUA_REDUCE_THREADS];
    u64 worst = 0;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) {
        i64 a = (i64)x[i], b = (i64)y[i];
        u64 d = a >= b ? (u64)a - (u64)b : (u64)b - (u64)a;
        worst = max_of(d, worst);
    }
    u64 total = block_max<GLUA_REDUCE_THREADS>(s, worst);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

template <class T>
__device__ inline void maxabsdiff_partial(const typename T::S* x, const typename T::S* y, i64 n, double* partials) {
    __shared__ double s[GLUA_REDUCE_THREADS];
    double worst = 0.0;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) {
        double a = T::wide(x[i]), b = T::wide(y[i]);
        if (a == b) continue; // equal values, infinities included, differ by 0
        double d = a - b;
        if (d < 0) d = -d;
        worst = max_nan(d, worst); // a NaN d (a NaN operand) sticks
    }
    double total = block_max<GLUA_REDUCE_THREADS>(s, worst);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// glua_sum_<dtype> serves every dtype's norm and the floats' sum;
// glua_isum_<dtype> is the integers' sum.
#define GLUA_SUM(NAME, T)                                                                              \
    extern "C" __global__ void glua_sum_##NAME(const T::S* x, i64 n, int square, double* partials) { \
        sum_partial<T>(x, n, square, partials);                                                        \
    }
#define GLUA_MAXABSDIFF(NAME, T)                                                                       \
    extern "C" __global__ void glua_maxabsdiff_##NAME(const T::S* x, const T::S* y, i64 n, double* partials) { \
        maxabsdiff_partial<T>(x, y, n, partials);                                                      \
    }
#define GLUA_INT_REDUCE(NAME, T)                                                                       \
    extern "C" __global__ void glua_isum_##NAME(const T::S* x, i64 n, u64* partials) {                 \
        isum_partial<T>(x, n, partials);                                                               \
    }                                                                                                  \
    extern "C" __global__ void glua_maxabsdiff_##NAME(const T::S* x, const T::S* y, i64 n, u64* partials) { \
        imaxabsdiff_partial<T>(x, y, n, partials);                                                     \
    }

GLUA_DTYPES(GLUA_SUM)
GLUA_FLOAT_DTYPES(GLUA_MAXABSDIFF)
GLUA_INT_DTYPES(GLUA_INT_REDUCE)

extern "C" __global__ void glua_finish_sum(const double* partials, int count, double* out) {
    __shared__ double s[GLUA_FINISH_THREADS];
    int t = threadIdx.x;
    double total = block_sum<GLUA_FINISH_THREADS>(s, t < count ? partials[t] : 0.0);
    if (t == 0) out[0] = total;
}

extern "C" __global__ void glua_finish_max(const double* partials, int count, double* out) {
    __shared__ double s[GLUA_FINISH_THREADS];
    int t = threadIdx.x;
    double total = block_max<GLUA_FINISH_THREADS>(s, t < count ? partials[t] : 0.0);
    if (t == 0) out[0] = total;
}

extern "C" __global__ void glua_finish_isum(const u64* partials, int count, u64* out) {
    __shared__ u64 s[GLUA_FINISH_THREADS];
    int t = threadIdx.x;
    u64 total = block_sum<GLUA_FINISH_THREADS>(s, t < count ? partials[t] : 0ull);
    if (t == 0) out[0] = total;
}

extern "C" __global__ void glua_finish_umax(const u64* partials, int count, u64* out) {
    __shared__ u64 s[GLUA_FINISH_THREADS];
    int t = threadIdx.x;
    u64 total = block_max<GLUA_FINISH_THREADS>(s, t < count ? partials[t] : 0ull);
    if (t == 0) out[0] = total;
}
