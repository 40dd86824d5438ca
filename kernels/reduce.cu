// reduce.cu: sum, sum of squares (norm) and max |x - y|, in two passes so
// that the result is the same every time for a given n: the host launches
// a grid that depends only on n, each block of GLUA_REDUCE_THREADS threads
// accumulates its grid-stride share in float64 in a fixed order, reduces
// it through shared memory in a fixed tree and writes one partial; then
// one block of GLUA_FINISH_THREADS threads combines the partials the same
// way. Loads stay scalar (not 16-byte vectors) so that the order of
// summation does not depend on the array's alignment.

#define GLUA_REDUCE_THREADS 256
#define GLUA_FINISH_THREADS 1024

// max with NaN winning, as kernels.MaxAbsDiff wants.
__device__ inline double max_nan(double p, double q) {
    if (p != p) return p;
    if (q != q) return q;
    return p > q ? p : q;
}

template <int N>
__device__ inline double block_sum(double* s, double v) {
    int t = threadIdx.x;
    s[t] = v;
    __syncthreads();
    for (int w = N / 2; w > 0; w >>= 1) {
        if (t < w) s[t] = add_rn(s[t], s[t + w]);
        __syncthreads();
    }
    return s[0];
}

template <int N>
__device__ inline double block_max(double* s, double v) {
    int t = threadIdx.x;
    s[t] = v;
    __syncthreads();
    for (int w = N / 2; w > 0; w >>= 1) {
        if (t < w) s[t] = max_nan(s[t], s[t + w]);
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

#define GLUA_REDUCE(NAME, T)                                                                           \
    extern "C" __global__ void glua_sum_##NAME(const T::S* x, i64 n, int square, double* partials) { \
        sum_partial<T>(x, n, square, partials);                                                        \
    }                                                                                                  \
    extern "C" __global__ void glua_maxabsdiff_##NAME(const T::S* x, const T::S* y, i64 n, double* partials) { \
        maxabsdiff_partial<T>(x, y, n, partials);                                                      \
    }

GLUA_DTYPES(GLUA_REDUCE)

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
