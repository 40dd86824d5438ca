// rand.cu: uniform [0, 1) by the counter-based formula of kernels.Rand:
// element i is splitmix64's finalizer applied to seed*golden + i, its top
// bits scaled by a power of two. Every step is exact, so the bits equal the
// Go implementation's. The divisions are by powers of two, hence exact.

__device__ inline u64 mix64(u64 z) {
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z;
}

#define GLUA_GOLDEN 0x9E3779B97F4A7C15ull

extern "C" __global__ void glua_rand_float64(double* x, i64 n, u64 seed) {
    u64 base = seed * GLUA_GOLDEN;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) x[i] = (double)(mix64(base + (u64)i) >> 11) / 9007199254740992.0;
}

extern "C" __global__ void glua_rand_float32(float* x, i64 n, u64 seed) {
    u64 base = seed * GLUA_GOLDEN;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) x[i] = (float)(mix64(base + (u64)i) >> 40) / 16777216.0f;
}

extern "C" __global__ void glua_rand_float16(u16* x, i64 n, u64 seed) {
    u64 base = seed * GLUA_GOLDEN;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) x[i] = f32_to_f16((float)(mix64(base + (u64)i) >> 53) / 2048.0f);
}

extern "C" __global__ void glua_rand_bfloat16(u16* x, i64 n, u64 seed) {
    u64 base = seed * GLUA_GOLDEN;
    i64 stride = grid_threads();
    for (i64 i = global_thread(); i < n; i += stride) x[i] = f32_to_bf16((float)(mix64(base + (u64)i) >> 56) / 256.0f);
}
