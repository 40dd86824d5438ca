// reduce.cu: sum, sum of squares (norm) and max |x - y|, in two passes so
// that the result is the same every time for a given n, on every device:
// the host launches a grid that depends only on n (ReduceBlocks), and the
// order in which the elements combine follows from n alone.
//
// The elements are taken as vectors of 16 bytes (4 float32s, 2 float64s,
// 8 halves, 16 uint8s; the last vector may be short). Block b owns the
// contiguous run of cv = ceil(vectors / blocks) vectors starting at b*cv;
// thread t of it takes the run's vectors t, t + THREADS, t + 2*THREADS,
// ..., and its k-th vector goes, element by element in order, into its
// accumulator k % ACCS. A thread's accumulators then combine in order
// (((a0 + a1) + a2) ...), the block's threads in a fixed tree through
// shared memory (t with t + w, for w = THREADS/2, ..., 1), and one block
// of FINISH_THREADS threads combines the partials: thread t adds partials
// t, t + FINISH_THREADS, ... in order, then the same tree. The Go
// reference (ref_reduce.go) follows exactly this order, so the CPU
// backend gives the GPU's bits.
//
// Where the host found the array 16-byte aligned (vec != 0), a vector is
// one 16-byte load; otherwise its elements load one by one. Either way a
// thread takes the same elements in the same order, so alignment changes
// the speed, never the result. Each thread loads UNROLL vectors before it
// adds any, so that enough loads are in flight to keep the memory busy;
// that changes no order either.
//
// Floats accumulate in float64. Integers are exact: a sum accumulates in
// 64 bits modulo 2^64 (u64, where the wrap is defined; the host reads the
// result as an int64), and max |x - y| is taken in u64, where every
// difference of two int64s fits; so any order gives the Go reference's
// bits.

#define GLUA_REDUCE_THREADS 256
#define GLUA_REDUCE_UNROLL 4
#define GLUA_REDUCE_ACCS 2
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

// GLUA_INLINE: the reducers live in registers only if every call on them
// is inlined (their accumulators are arrays indexed by unrolled constants).
#define GLUA_INLINE __attribute__((always_inline)) inline

__device__ inline i64 min_i64(i64 a, i64 b) { return a < b ? a : b; }

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

// Lanes is one 16-byte vector of a dtype's elements.
template <class T>
union Lanes {
    v16 v;
    typename T::S e[16 / sizeof(typename T::S)];
};

template <class T, bool VEC>
__device__ GLUA_INLINE Lanes<T> load_lanes(const typename T::S* x, i64 j) {
    const int P = 16 / sizeof(typename T::S);
    Lanes<T> l;
    if (VEC) {
        l.v = ((const v16*)x)[j];
    } else {
#pragma unroll
        for (int e = 0; e < P; e++) l.e[e] = x[j * P + e];
    }
    return l;
}

// each_vector walks this thread's vectors in the order of the comment at
// the top: r.take(a, j) for each full vector j, into accumulator a, and
// r.tail(a, from, n) for the short last vector, if this thread owns it
// (elements from .. n-1). r.load(j) may be issued for several vectors
// before their take.
template <int P, class R>
__device__ GLUA_INLINE void each_vector(R& r, i64 n) {
    const int U = GLUA_REDUCE_UNROLL, A = GLUA_REDUCE_ACCS;
    const i64 step = GLUA_REDUCE_THREADS;
    const i64 full = n / P, vectors = (n + P - 1) / P;
    const i64 per_block = (vectors + gridDim.x - 1) / gridDim.x;
    const i64 start = (i64)blockIdx.x * per_block;
    const i64 end = min_i64(vectors, start + per_block);
    const i64 end_full = min_i64(end, full);
    i64 j = start + threadIdx.x;
    // k, the index of vector j among this thread's, stays a multiple of U
    // (a multiple of A), so the u-th vector of a round goes to u % A.
    for (; j + (U - 1) * step < end_full; j += U * step) {
        typename R::Item v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = r.load(j + u * step);
#pragma unroll
        for (int u = 0; u < U; u++) r.take(u % A, v[u]);
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        i64 jj = j + u * step;
        if (jj < end_full) {
            r.take(u % A, r.load(jj));
        } else if (jj == full && jj < end) {
            r.tail(u % A, jj * P, n);
        }
    }
}

// term is what a sum adds for an element: for a float sum (V double) the
// element in float64, or its square; for an integer sum (V u64) the
// element modulo 2^64.
template <class T, bool SQUARE>
__device__ GLUA_INLINE double term(typename T::S s, double) {
    double v = T::wide(s);
    return SQUARE ? mul_rn(v, v) : v;
}
template <class T, bool SQUARE>
__device__ GLUA_INLINE u64 term(typename T::S s, u64) { return (u64)(i64)s; }

// Sums is each_vector's reducer of a sum in V: GLUA_REDUCE_ACCS
// accumulators, combined in order at the end.
template <class T, bool VEC, class V, bool SQUARE>
struct Sums {
    typedef Lanes<T> Item;
    static const int P = 16 / sizeof(typename T::S);
    const typename T::S* x;
    V acc[GLUA_REDUCE_ACCS];
    __device__ GLUA_INLINE Sums(const typename T::S* x_) : x(x_) {
#pragma unroll
        for (int a = 0; a < GLUA_REDUCE_ACCS; a++) acc[a] = V(0);
    }
    __device__ GLUA_INLINE Item load(i64 j) const { return load_lanes<T, VEC>(x, j); }
    __device__ GLUA_INLINE void take(int a, const Item& l) {
#pragma unroll
        for (int e = 0; e < P; e++) acc[a] = sum_of(acc[a], term<T, SQUARE>(l.e[e], V(0)));
    }
    __device__ GLUA_INLINE void tail(int a, i64 from, i64 n) {
        for (i64 i = from; i < n; i++) acc[a] = sum_of(acc[a], term<T, SQUARE>(x[i], V(0)));
    }
    __device__ GLUA_INLINE V total() const {
        V s = acc[0];
#pragma unroll
        for (int a = 1; a < GLUA_REDUCE_ACCS; a++) s = sum_of(s, acc[a]);
        return s;
    }
};

// abs_diff is |p - q|: for a float dtype in float64, 0 where the values
// are equal (infinities included) and NaN where either is NaN; for an
// integer dtype exactly, in u64. The last argument picks the type.
template <class T>
__device__ inline double abs_diff(typename T::S p, typename T::S q, double) {
    double a = T::wide(p), b = T::wide(q);
    if (a == b) return 0.0;
    double d = a - b;
    return d < 0 ? -d : d;
}
template <class T>
__device__ inline u64 abs_diff(typename T::S p, typename T::S q, u64) {
    i64 a = (i64)p, b = (i64)q;
    return a >= b ? (u64)a - (u64)b : (u64)b - (u64)a;
}

// Pair is a vector of x and the same vector of y.
template <class T>
struct Pair {
    Lanes<T> x, y;
};

// Diffs is the reducer of max |x - y| in D (double for the floats, u64 for
// the integers); it ignores the accumulator index: a max has no order.
template <class T, bool VEC, class D>
struct Diffs {
    typedef Pair<T> Item;
    static const int P = 16 / sizeof(typename T::S);
    const typename T::S *x, *y;
    D worst;
    __device__ GLUA_INLINE Diffs(const typename T::S* x_, const typename T::S* y_) : x(x_), y(y_), worst(0) {}
    __device__ GLUA_INLINE D total() const { return worst; }
    __device__ GLUA_INLINE Item load(i64 j) const {
        Item it;
        it.x = load_lanes<T, VEC>(x, j);
        it.y = load_lanes<T, VEC>(y, j);
        return it;
    }
    __device__ GLUA_INLINE void take(int, const Item& l) {
#pragma unroll
        for (int e = 0; e < P; e++) worst = max_of(abs_diff<T>(l.x.e[e], l.y.e[e], D(0)), worst);
    }
    __device__ GLUA_INLINE void tail(int, i64 from, i64 n) {
        for (i64 i = from; i < n; i++) worst = max_of(abs_diff<T>(x[i], y[i], D(0)), worst);
    }
};

// share is this thread's total by the reducer R made from arrays.
template <class R, class... Arrays>
__device__ GLUA_INLINE auto share(i64 n, Arrays... arrays) -> decltype(R(arrays...).total()) {
    R r(arrays...);
    each_vector<R::P>(r, n);
    return r.total();
}

template <class T>
__device__ inline void sum_partial(const typename T::S* x, i64 n, int square, int vec, double* partials) {
    __shared__ double s[GLUA_REDUCE_THREADS];
    double acc;
    if (vec) acc = square ? share<Sums<T, true, double, true> >(n, x) : share<Sums<T, true, double, false> >(n, x);
    else acc = square ? share<Sums<T, false, double, true> >(n, x) : share<Sums<T, false, double, false> >(n, x);
    double total = block_sum<GLUA_REDUCE_THREADS>(s, acc);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

template <class T>
__device__ inline void isum_partial(const typename T::S* x, i64 n, int vec, u64* partials) {
    __shared__ u64 s[GLUA_REDUCE_THREADS];
    u64 acc = vec ? share<Sums<T, true, u64, false> >(n, x) : share<Sums<T, false, u64, false> >(n, x);
    u64 total = block_sum<GLUA_REDUCE_THREADS>(s, acc);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

template <class T, class D>
__device__ inline void maxabsdiff_partial(const typename T::S* x, const typename T::S* y, i64 n, int vec, D* partials) {
    __shared__ D s[GLUA_REDUCE_THREADS];
    D worst = vec ? share<Diffs<T, true, D> >(n, x, y) : share<Diffs<T, false, D> >(n, x, y);
    D total = block_max<GLUA_REDUCE_THREADS>(s, worst);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// glua_sum_<dtype> serves every dtype's norm and the floats' sum;
// glua_isum_<dtype> is the integers' sum. vec != 0: x is 16-byte aligned
// (both x and y for max |x - y|).
#define GLUA_SUM(NAME, T)                                                                                       \
    extern "C" __global__ void glua_sum_##NAME(const T::S* x, i64 n, int square, int vec, double* partials) { \
        sum_partial<T>(x, n, square, vec, partials);                                                            \
    }
#define GLUA_MAXABSDIFF(NAME, T)                                                                                          \
    extern "C" __global__ void glua_maxabsdiff_##NAME(const T::S* x, const T::S* y, i64 n, int vec, double* partials) { \
        maxabsdiff_partial<T, double>(x, y, n, vec, partials);                                                            \
    }
#define GLUA_INT_REDUCE(NAME, T)                                                                                       \
    extern "C" __global__ void glua_isum_##NAME(const T::S* x, i64 n, int vec, u64* partials) {                      \
        isum_partial<T>(x, n, vec, partials);                                                                          \
    }                                                                                                                  \
    extern "C" __global__ void glua_maxabsdiff_##NAME(const T::S* x, const T::S* y, i64 n, int vec, u64* partials) { \
        maxabsdiff_partial<T, u64>(x, y, n, vec, partials);                                                            \
    }

GLUA_DTYPES(GLUA_SUM)
GLUA_FLOAT_DTYPES(GLUA_MAXABSDIFF)
GLUA_INT_DTYPES(GLUA_INT_REDUCE)

// The finishing kernels: thread t combines partials t, t + FINISH_THREADS,
// ... in order, from the operation's identity (0; every partial of a max
// is at least 0), then the block's tree.
template <class V, bool MAX>
__device__ inline void finish(const V* partials, int count, V* out) {
    __shared__ V s[GLUA_FINISH_THREADS];
    int t = threadIdx.x;
    V acc = V(0);
    for (int i = t; i < count; i += GLUA_FINISH_THREADS) acc = MAX ? max_of(acc, partials[i]) : sum_of(acc, partials[i]);
    V total = MAX ? block_max<GLUA_FINISH_THREADS>(s, acc) : block_sum<GLUA_FINISH_THREADS>(s, acc);
    if (t == 0) out[0] = total;
}

extern "C" __global__ void glua_finish_sum(const double* partials, int count, double* out) { finish<double, false>(partials, count, out); }
extern "C" __global__ void glua_finish_max(const double* partials, int count, double* out) { finish<double, true>(partials, count, out); }
extern "C" __global__ void glua_finish_isum(const u64* partials, int count, u64* out) { finish<u64, false>(partials, count, out); }
extern "C" __global__ void glua_finish_umax(const u64* partials, int count, u64* out) { finish<u64, true>(partials, count, out); }
