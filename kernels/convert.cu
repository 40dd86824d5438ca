// convert.cu: copy with conversion between every pair of different
// dtypes. The source element is read exactly as float64 (int64 rounds to
// nearest) and stored as device.Set stores a float64, which is what
// kernels.Copy does for every pair. Equal dtypes copy their bits with
// glua_copy_bits_<bytes>, below.

// The loop has the elementwise kernels' launch shape (dtypes.cu): each
// thread of a round loads U elements, a block's width apart, before it
// stores any, U = 16 bytes of the narrower dtype, so that the thread keeps
// at least a vector's bytes in flight; the host's grid
// (kernels.ConvertShape, for equal dtypes too) gives each thread one
// round. f turns a loaded element into the stored one.
template <class DS, class SS, class I, class F>
__device__ inline void units_loop(DS* y, const SS* x, I n, F f) {
    const int U = 16 / (sizeof(DS) < sizeof(SS) ? sizeof(DS) : sizeof(SS));
    for (I b = units_first<U, I>(); b < n; b += units_step<U, I>()) {
        SS a[U];
#pragma unroll
        for (int k = 0; k < U; k++) {
            I i = b + (I)k * (I)blockDim.x;
            if (i < n) a[k] = x[i];
        }
#pragma unroll
        for (int k = 0; k < U; k++) {
            I i = b + (I)k * (I)blockDim.x;
            if (i < n) y[i] = f(a[k]);
        }
    }
}

template <class DS, class SS, class F>
__device__ inline void units(DS* y, const SS* x, i64 n, F f) {
    if (index32(n)) {
        units_loop<DS, SS, u32>(y, x, (u32)n, f);
    } else {
        units_loop<DS, SS, i64>(y, x, n, f);
    }
}

template <class D, class S>
struct converted {
    __device__ typename D::S operator()(typename S::S v) const { return D::from_double(S::wide(v)); }
};

template <class D, class S>
__device__ inline void convert(typename D::S* y, const typename S::S* x, i64 n) {
    units(y, x, n, converted<D, S>());
}

#define GLUA_CONVERT_PAIR(DN, DT, SN, ST)                                                       \
    extern "C" __global__ void glua_convert_##SN##_to_##DN(DT::S* y, const ST::S* x, i64 n) {   \
        convert<DT, ST>(y, x, n);                                                               \
    }

#define GLUA_CONVERT_TO_F32(SN, ST) GLUA_CONVERT_PAIR(float32, F32, SN, ST)
#define GLUA_CONVERT_TO_F64(SN, ST) GLUA_CONVERT_PAIR(float64, F64, SN, ST)
#define GLUA_CONVERT_TO_F16(SN, ST) GLUA_CONVERT_PAIR(float16, F16, SN, ST)
#define GLUA_CONVERT_TO_BF16(SN, ST) GLUA_CONVERT_PAIR(bfloat16, BF16, SN, ST)
#define GLUA_CONVERT_TO_I32(SN, ST) GLUA_CONVERT_PAIR(int32, I32, SN, ST)
#define GLUA_CONVERT_TO_I64(SN, ST) GLUA_CONVERT_PAIR(int64, I64, SN, ST)
#define GLUA_CONVERT_TO_U8(SN, ST) GLUA_CONVERT_PAIR(uint8, U8, SN, ST)

// Every ordered pair, equal ones included (they are unused but harmless,
// and listing all keeps the table obviously complete).
GLUA_DTYPES(GLUA_CONVERT_TO_F32)
GLUA_DTYPES(GLUA_CONVERT_TO_F64)
GLUA_DTYPES(GLUA_CONVERT_TO_F16)
GLUA_DTYPES(GLUA_CONVERT_TO_BF16)
GLUA_DTYPES(GLUA_CONVERT_TO_I32)
GLUA_DTYPES(GLUA_CONVERT_TO_I64)
GLUA_DTYPES(GLUA_CONVERT_TO_U8)

// A copy between arrays of one dtype moves each element's bits unchanged,
// a NaN's payload included, as an unsigned word of its width. It is a
// kernel rather than a device-to-device memcpy, whose driver call costs a
// small copy several times a launch's host time and cannot join a run of
// launches (cuda/rungraph.go).
template <class W>
struct same_bits {
    __device__ W operator()(W v) const { return v; }
};

#define GLUA_COPY_BITS(BYTES, W) \
    extern "C" __global__ void glua_copy_bits_##BYTES(W* y, const W* x, i64 n) { units(y, x, n, same_bits<W>()); }

GLUA_COPY_BITS(1, u8)
GLUA_COPY_BITS(2, u16)
GLUA_COPY_BITS(4, u32)
GLUA_COPY_BITS(8, u64)
