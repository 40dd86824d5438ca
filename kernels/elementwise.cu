// elementwise.cu: fill and the kernels of the table, for every dtype. Each
// kernel reads its operands and writes out, which is either the first
// operand itself (the in-place kernels) or an array sharing no byte with
// them (the operators' new arrays); every element is read before its
// result is stored, so both are safe. The loops have the launch shape of
// dtypes.cu (units_first, units_step). When the host has checked that
// every pointer is 16-byte aligned (vec != 0), the units are 16-byte
// vectors, so one load instruction brings 4 float32s or 16 uint8s, and
// the remaining tail goes element by element; otherwise the units are
// elements. Arrays that fit (index32) are indexed with 32 bits.

template <class T>
union Pack {
    v16 v;
    typename T::S e[16 / sizeof(typename T::S)];
};

// plain_loads<T>::type is T, or for float16 F16Plain, with which a
// vector that nan_free passes is loaded; nan_free is true for every other
// dtype, so that its other branch is never compiled in.
template <class T> struct plain_loads { typedef T type; };
template <> struct plain_loads<F16> { typedef F16Plain type; };

template <class T> __device__ inline bool nan_free(const v16&) { return true; }

// A float16 is NaN when its low 15 bits pass 0x7c00, which adding 0x3ff
// carries into the top bit of its half of the word, and no further.
template <> __device__ inline bool nan_free<F16>(const v16& v) {
    u32 m = ((v.x & 0x7fff7fffu) + 0x03ff03ffu) | ((v.y & 0x7fff7fffu) + 0x03ff03ffu) |
            ((v.z & 0x7fff7fffu) + 0x03ff03ffu) | ((v.w & 0x7fff7fffu) + 0x03ff03ffu);
    return (m & 0x80008000u) == 0;
}

// elementwise_loop sets out[i] = op(y[i], x[i]) for i < n; a one-array
// kernel passes x = 0 and an op that ignores its second operand, which is
// never loaded. plain is op for plain_loads<T>::type, used on vectors
// that nan_free passes.
template <class T, class I, bool TWO, class Op, class Plain>
__device__ inline void elementwise_loop(typename T::S* out, const typename T::S* y, const typename T::S* x, I n, int vec, Op op, Plain plain) {
    typedef typename T::S S;
    if (vec) {
        const int U = GLUA_VECTORS_PER_THREAD;
        const int P = 16 / sizeof(S);
        I nv = n / P;
        v16* ov = (v16*)out;
        const v16* yv = (const v16*)y;
        const v16* xv = (const v16*)x;
        for (I b = units_first<U, I>(); b < nv; b += units_step<U, I>()) {
            Pack<T> a[U], c[U];
#pragma unroll
            for (int k = 0; k < U; k++) {
                I v = b + (I)k * (I)blockDim.x;
                if (v < nv) {
                    a[k].v = yv[v];
                    if (TWO) c[k].v = xv[v];
                }
            }
#pragma unroll
            for (int k = 0; k < U; k++) {
                I v = b + (I)k * (I)blockDim.x;
                if (v < nv) {
                    if (nan_free<T>(a[k].v) && (!TWO || nan_free<T>(c[k].v))) {
#pragma unroll
                        for (int j = 0; j < P; j++) a[k].e[j] = plain(a[k].e[j], TWO ? c[k].e[j] : S());
                    } else {
#pragma unroll
                        for (int j = 0; j < P; j++) a[k].e[j] = op(a[k].e[j], TWO ? c[k].e[j] : S());
                    }
                    ov[v] = a[k].v;
                }
            }
        }
        // the last n mod P elements, fewer than a block's threads
        I i = nv * P + (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x;
        if (i < n) out[i] = op(y[i], TWO ? x[i] : S());
        return;
    }
    const int U = GLUA_ELEMENTS_PER_THREAD;
    for (I b = units_first<U, I>(); b < n; b += units_step<U, I>()) {
        S a[U], c[U];
#pragma unroll
        for (int k = 0; k < U; k++) {
            I i = b + (I)k * (I)blockDim.x;
            if (i < n) {
                a[k] = y[i];
                if (TWO) c[k] = x[i];
            }
        }
#pragma unroll
        for (int k = 0; k < U; k++) {
            I i = b + (I)k * (I)blockDim.x;
            if (i < n) out[i] = op(a[k], TWO ? c[k] : S());
        }
    }
}

template <class T, bool TWO, class Op, class Plain>
__device__ inline void elementwise(typename T::S* out, const typename T::S* y, const typename T::S* x, i64 n, int vec, Op op, Plain plain) {
    if (index32(n)) {
        elementwise_loop<T, u32, TWO>(out, y, x, (u32)n, vec, op, plain);
    } else {
        elementwise_loop<T, i64, TWO>(out, y, x, n, vec, op, plain);
    }
}

// The kernels of the table in elementwise_ops.go, which cudaSource writes
// after this file, one line each:
//
//     GLUA_TWO_ARRAYS(add, add_rn(y, x))
//
// defines glua_add_<dtype>(out, y, x, n, a, vec) for every dtype, setting
// out = add_rn(y, x) with y and x loaded to C, the dtype's compute type,
// and a, a double for the float dtypes and an i64 for the integer ones,
// turned into C by T::scalar; GLUA_ONE_ARRAY(scale, mul_rn(x, a)) defines
// glua_scale_<dtype>(out, x, n, a, vec). An entry whose integer dtypes
// compute another expression has it first:
//
//     GLUA_INT_EXPR(div, floor_div(y, x))
//
// The expression becomes glua_<op>_expr(y, x, a): a template for every C,
// and with GLUA_INT_EXPR two plain functions, for int and i64, which the
// integer dtypes' calls prefer to the template. An expression may use
// commas: it is the macro's variadic tail.
#define GLUA_INT_EXPR(OP, ...)                                                                  \
    __device__ inline int glua_##OP##_expr(int y, int x, int a) { return __VA_ARGS__; }         \
    __device__ inline i64 glua_##OP##_expr(i64 y, i64 x, i64 a) { return __VA_ARGS__; }

#define GLUA_EXPR(OP, ...)                                                                      \
    template <class C> __device__ inline C glua_##OP##_expr(C y, C x, C a) { return __VA_ARGS__; }

#define GLUA_TWO_ARRAYS(OP, ...)                                                                \
    GLUA_EXPR(OP, __VA_ARGS__)                                                                  \
    template <class T> struct glua_##OP##_fn {                                                  \
        typename T::C a;                                                                        \
        __device__ typename T::S operator()(typename T::S y, typename T::S x) const {           \
            return T::store(glua_##OP##_expr(T::load(y), T::load(x), a));                       \
        }                                                                                       \
    };                                                                                          \
    GLUA_DTYPES_WITH(GLUA_TWO_ARRAYS_ENTRY, OP)

#define GLUA_TWO_ARRAYS_ENTRY(OP, NAME, T)                                                      \
    extern "C" __global__ void glua_##OP##_##NAME(T::S* out, const T::S* y, const T::S* x, i64 n, T::A a, int vec) { \
        glua_##OP##_fn<T> op = {T::scalar(a)};                                                  \
        glua_##OP##_fn<plain_loads<T>::type> plain = {T::scalar(a)};                            \
        elementwise<T, true>(out, y, x, n, vec, op, plain);                                     \
    }

#define GLUA_ONE_ARRAY(OP, ...)                                                                 \
    GLUA_EXPR(OP, __VA_ARGS__)                                                                  \
    template <class T> struct glua_##OP##_fn {                                                  \
        typename T::C a;                                                                        \
        __device__ typename T::S operator()(typename T::S x, typename T::S) const {             \
            return T::store(glua_##OP##_expr(typename T::C(), T::load(x), a));                  \
        }                                                                                       \
    };                                                                                          \
    GLUA_DTYPES_WITH(GLUA_ONE_ARRAY_ENTRY, OP)

#define GLUA_ONE_ARRAY_ENTRY(OP, NAME, T)                                                       \
    extern "C" __global__ void glua_##OP##_##NAME(T::S* out, const T::S* x, i64 n, T::A a, int vec) { \
        glua_##OP##_fn<T> op = {T::scalar(a)};                                                  \
        glua_##OP##_fn<plain_loads<T>::type> plain = {T::scalar(a)};                            \
        elementwise<T, false>(out, x, (const T::S*)0, n, vec, op, plain);                       \
    }

// glua_fill writes a 16-byte pattern (lo, then hi, little-endian) over
// nbytes at x: the element's bits, converted on the host as device.Set
// does and repeated. x is element-aligned and the element size divides 16,
// so byte i of x takes pattern byte i mod 16, and the 16-byte-aligned body
// can be stored as whole vectors of the unrotated pattern.
__device__ inline u8 pattern_byte(u64 lo, u64 hi, u64 i) {
    u64 w = (i & 8) ? hi : lo;
    return (u8)(w >> (8 * (i & 7)));
}

extern "C" __global__ void glua_fill(u8* x, u64 nbytes, u64 lo, u64 hi) {
    i64 tid = global_thread(), stride = grid_threads();
    u64 head = (16 - ((u64)x & 15)) & 15;
    if (head > nbytes) head = nbytes;
    u64 nv = (nbytes - head) / 16;
    u64 tail = head + nv * 16;
    v16 v;
    v.x = (u32)lo;
    v.y = (u32)(lo >> 32);
    v.z = (u32)hi;
    v.w = (u32)(hi >> 32);
    v16* body = (v16*)(x + head);
    // the body in units_first's shape: U vectors a thread, a block's
    // width apart, a round each on the host's grid (kernels.FillShape)
    const int U = GLUA_FILL_VECTORS_PER_THREAD;
    for (u64 b = units_first<U, u64>(); b < nv; b += units_step<U, u64>()) {
#pragma unroll
        for (int k = 0; k < U; k++) {
            u64 i = b + (u64)k * blockDim.x;
            if (i < nv) body[i] = v;
        }
    }
    for (i64 i = tid; (u64)i < head; i += stride) x[i] = pattern_byte(lo, hi, (u64)i);
    for (u64 i = tail + (u64)tid; i < nbytes; i += (u64)stride) x[i] = pattern_byte(lo, hi, i);
}
