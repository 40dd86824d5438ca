// convert.cu: copy with conversion between every pair of different
// dtypes. The source element is read exactly as float64 (int64 rounds to
// nearest) and stored as device.Set stores a float64, which is what
// kernels.Copy does for every pair. Equal dtypes never come here: the host
// copies their bits with a device-to-device memcpy.

template <class D, class S>
__device__ inline void convert(typename D::S* y, const typename S::S* x, i64 n) {
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) y[i] = D::from_double(S::wide(x[i]));
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
