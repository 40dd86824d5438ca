// shape.cu: launch shapes of glua's elementwise kernels, timed on one GPU,
// to choose kernels.ElementwiseShape's constants for a card (run.sh runs
// it where nvcc is found).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o shape shape.cu && ./shape [log2 n] [rounds]
//
// Two operations on n float32 elements (default 2^28):
//   axpy   y = a*x + y          (x, y read, y written: 12 bytes an element)
//   chain  y = ((x*a + b)*x - c)/d   (x read, y written: 8 bytes an element)
// each rounded per operation as glua's kernels are (--fmad=false: the
// product and the sum rounded apart; IEEE division).
//
// Variants (the first of each op is today's built-in, the second today's map):
//   gs-today      grid-stride, 16-byte vectors, i64 index, blocks of 256,
//                 at most 8192 blocks (kernels/gpu.go's gridFor)
//   map-today     grid-stride, one element per iteration, i64, blocks of 256,
//                 at most 65535 blocks (runtime/jitmap.go)
//   gs-i32        gs-today with an int index
//   oneshot-vV-tT one-shot grid: each thread V 16-byte vectors (all loads
//                 issued before the math), T threads a block, int index
//   gs-smK        grid-stride, 16-byte vectors, int index, SMs*K blocks of 256
//   gsu-smK-uU    the same, U vectors an iteration, loads before the math
//   memcpy        cudaMemcpyAsync device to device of 4n bytes (8n moved), the
//                 bandwidth ceiling of the chain's traffic
// Every variant's result is checked bit for bit against gs-today's on fresh
// random inputs (a hash of the index, never zero) before it is timed; the
// time is the median of 20 launches after 3 warm-up launches, each launch
// between its own pair of CUDA events.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define CK(x)                                                                                     \
    do {                                                                                          \
        cudaError_t e_ = (x);                                                                     \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));   \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

typedef long long i64;
typedef unsigned long long u64;

struct Axpy {
    static const bool reads_y = true;
    float a;
    __device__ float operator()(float y, float x) const { return __fadd_rn(__fmul_rn(a, x), y); }
};

struct Chain {
    static const bool reads_y = false;
    float a, b, c, d;
    __device__ float operator()(float, float x) const {
        return __fdiv_rn(__fsub_rn(__fmul_rn(__fadd_rn(__fmul_rn(x, a), b), x), c), d);
    }
};

template <class Op>
__device__ inline float4 apply(const Op& op, float4 y, float4 x) {
    float4 r;
    r.x = op(y.x, x.x);
    r.y = op(y.y, x.y);
    r.z = op(y.z, x.z);
    r.w = op(y.w, x.w);
    return r;
}

template <class Op, class I>
__device__ inline void scalar_at(float* out, const float* y, const float* x, I i, const Op& op) {
    out[i] = op(Op::reads_y ? y[i] : 0.0f, x[i]);
}

// Today's built-in: a grid-stride loop over 16-byte vectors, then the tail.
template <class Op, class I>
__global__ void gridstride(float* out, const float* y, const float* x, I n, Op op) {
    I tid = (I)blockIdx.x * blockDim.x + threadIdx.x, stride = (I)gridDim.x * blockDim.x;
    I nv = n / 4;
    float4* ov = (float4*)out;
    const float4* yv = (const float4*)y;
    const float4* xv = (const float4*)x;
    for (I i = tid; i < nv; i += stride) {
        float4 a = Op::reads_y ? yv[i] : make_float4(0, 0, 0, 0);
        ov[i] = apply(op, a, xv[i]);
    }
    for (I i = nv * 4 + tid; i < n; i += stride) scalar_at(out, y, x, i, op);
}

// Grid-stride with U vectors an iteration, all loaded before the math.
template <int U, class Op, class I>
__global__ void gridstride_unrolled(float* out, const float* y, const float* x, I n, Op op) {
    I tid = (I)blockIdx.x * blockDim.x + threadIdx.x, stride = (I)gridDim.x * blockDim.x;
    I nv = n / 4;
    float4* ov = (float4*)out;
    const float4* yv = (const float4*)y;
    const float4* xv = (const float4*)x;
    I i = tid;
    for (; i + (U - 1) * stride < nv; i += U * stride) {
        float4 a[U], b[U];
#pragma unroll
        for (int j = 0; j < U; j++) {
            a[j] = Op::reads_y ? yv[i + j * stride] : make_float4(0, 0, 0, 0);
            b[j] = xv[i + j * stride];
        }
#pragma unroll
        for (int j = 0; j < U; j++) ov[i + j * stride] = apply(op, a[j], b[j]);
    }
    for (; i < nv; i += stride) {
        float4 a = Op::reads_y ? yv[i] : make_float4(0, 0, 0, 0);
        ov[i] = apply(op, a, xv[i]);
    }
    for (I k = nv * 4 + tid; k < n; k += stride) scalar_at(out, y, x, k, op);
}

// Today's map: a grid-stride loop of one element an iteration.
template <class Op>
__global__ void scalar_gridstride(float* out, const float* y, const float* x, i64 n, Op op) {
    i64 tid = (i64)blockIdx.x * blockDim.x + threadIdx.x, stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = tid; i < n; i += stride) scalar_at(out, y, x, i, op);
}

// PyTorch's shape: each block covers T*V vectors, thread t of block b the
// vectors b*T*V + j*T + t (j < V), so each warp's loads are contiguous; the
// n % 4 elements after the last vector go to block 0's first threads.
template <int V, int T, class Op, class I>
__global__ void __launch_bounds__(T) oneshot(float* out, const float* y, const float* x, I n, Op op) {
    I nv = n / 4;
    I base = (I)blockIdx.x * (T * V) + threadIdx.x;
    float4* ov = (float4*)out;
    const float4* yv = (const float4*)y;
    const float4* xv = (const float4*)x;
    float4 a[V], b[V];
#pragma unroll
    for (int j = 0; j < V; j++) {
        I i = base + j * T;
        a[j] = make_float4(0, 0, 0, 0);
        b[j] = make_float4(0, 0, 0, 0);
        if (i < nv) {
            if (Op::reads_y) a[j] = yv[i];
            b[j] = xv[i];
        }
    }
#pragma unroll
    for (int j = 0; j < V; j++) {
        I i = base + j * T;
        if (i < nv) ov[i] = apply(op, a[j], b[j]);
    }
    if (blockIdx.x == 0 && (I)threadIdx.x < n - nv * 4) scalar_at(out, y, x, nv * 4 + (I)threadIdx.x, op);
}

// Fresh inputs: splitmix64 of (index, seed), in (0, 1].
__global__ void fill_random(float* p, i64 n, u64 seed) {
    i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        u64 z = (u64)i + seed * 0x9E3779B97F4A7C15ULL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        p[i] = (float)((z >> 40) + 1) * (1.0f / 16777216.0f);
    }
}

__global__ void count_different(const float* u, const float* v, i64 n, unsigned long long* count) {
    i64 stride = (i64)gridDim.x * blockDim.x;
    unsigned long long c = 0;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        c += __float_as_uint(u[i]) != __float_as_uint(v[i]);
    if (c) atomicAdd(count, c);
}

typedef std::function<void(float* out, const float* y, const float* x)> Launch;

struct Variant {
    std::string name;
    unsigned grid, block;
    Launch launch;
};

static unsigned cap(i64 blocks, i64 most) { return (unsigned)std::max<i64>(1, std::min(blocks, most)); }

template <class Op>
static std::vector<Variant> variants(i64 n, int sms, Op op) {
    std::vector<Variant> v;
    i64 nv = n / 4, items = nv + n % 4;
    bool fits = n < (1LL << 31);
    {
        unsigned g = cap((items + 255) / 256, 8192);
        v.push_back({"gs-today", g, 256, [=](float* o, const float* y, const float* x) {
                         gridstride<Op, i64><<<g, 256>>>(o, y, x, n, op);
                     }});
    }
    {
        unsigned g = cap((n + 255) / 256, 65535);
        v.push_back({"map-today", g, 256, [=](float* o, const float* y, const float* x) {
                         scalar_gridstride<Op><<<g, 256>>>(o, y, x, n, op);
                     }});
    }
    if (!fits) return v;
    int in = (int)n;
    {
        unsigned g = cap((items + 255) / 256, 8192);
        v.push_back({"gs-i32", g, 256, [=](float* o, const float* y, const float* x) {
                         gridstride<Op, int><<<g, 256>>>(o, y, x, in, op);
                     }});
    }
#define ONESHOT(V, T)                                                                             \
    {                                                                                             \
        unsigned g = cap((nv + (T * V) - 1) / (T * V), 0x7fffffff);                               \
        v.push_back({"oneshot-v" #V "-t" #T, g, T, [=](float* o, const float* y, const float* x) { \
                         oneshot<V, T, Op, int><<<g, T>>>(o, y, x, in, op);                       \
                     }});                                                                         \
    }
    ONESHOT(1, 128) ONESHOT(2, 128) ONESHOT(4, 128) ONESHOT(8, 128)
    ONESHOT(1, 256) ONESHOT(2, 256) ONESHOT(4, 256) ONESHOT(8, 256)
    ONESHOT(1, 512) ONESHOT(2, 512) ONESHOT(4, 512) ONESHOT(8, 512)
#undef ONESHOT
    {
        unsigned g = cap((nv + 511) / 512, 0x7fffffff);
        v.push_back({"oneshot-v4-t128-i64", g, 128, [=](float* o, const float* y, const float* x) {
                         oneshot<4, 128, Op, i64><<<g, 128>>>(o, y, x, n, op);
                     }});
    }
    for (int k : {2, 4, 8, 16, 32}) {
        unsigned g = cap((i64)sms * k, 0x7fffffff);
        v.push_back({"gs-sm" + std::to_string(k), g, 256, [=](float* o, const float* y, const float* x) {
                         gridstride<Op, int><<<g, 256>>>(o, y, x, in, op);
                     }});
    }
    for (int k : {4, 8, 16}) {
        unsigned g = cap((i64)sms * k, 0x7fffffff);
        v.push_back({"gsu-sm" + std::to_string(k) + "-u2", g, 256, [=](float* o, const float* y, const float* x) {
                         gridstride_unrolled<2, Op, int><<<g, 256>>>(o, y, x, in, op);
                     }});
        v.push_back({"gsu-sm" + std::to_string(k) + "-u4", g, 256, [=](float* o, const float* y, const float* x) {
                         gridstride_unrolled<4, Op, int><<<g, 256>>>(o, y, x, in, op);
                     }});
    }
    return v;
}

static char device_name[256];

static float median(std::vector<float> t) {
    std::sort(t.begin(), t.end());
    size_t m = t.size() / 2;
    return t.size() % 2 ? t[m] : (t[m - 1] + t[m]) / 2;
}

static void fresh(float* x, float* y, i64 n) {
    fill_random<<<4096, 256>>>(x, n, 1);
    fill_random<<<4096, 256>>>(y, n, 2);
    CK(cudaGetLastError());
}

static const int reps = 20, warmup = 3;

// times launches of l (in place: out = y) and returns the median ms.
static float time_ms(const std::function<void()>& l, cudaEvent_t* ev) {
    for (int i = 0; i < warmup; i++) l();
    for (int i = 0; i < reps; i++) {
        CK(cudaEventRecord(ev[2 * i]));
        l();
        CK(cudaEventRecord(ev[2 * i + 1]));
    }
    CK(cudaGetLastError());
    CK(cudaEventSynchronize(ev[2 * reps - 1]));
    std::vector<float> t(reps);
    for (int i = 0; i < reps; i++) CK(cudaEventElapsedTime(&t[i], ev[2 * i], ev[2 * i + 1]));
    return median(t);
}

template <class Op>
static void sweep(const char* opname, double bytes_per_elem, i64 n, int sms, Op op, float* x, float* y, float* z,
                  float* ref, unsigned long long* dcount, cudaEvent_t* ev, int round) {
    std::vector<Variant> vs = variants(n, sms, op);
    double bytes = bytes_per_elem * (double)n;
    float base_ms = 0, map_ms = 0;
    fresh(x, y, n);
    vs[0].launch(ref, y, x);
    CK(cudaGetLastError());
    for (size_t k = 0; k < vs.size(); k++) {
        Variant& v = vs[k];
        fresh(x, y, n);
        CK(cudaMemset(z, 0, sizeof(float) * n));
        v.launch(z, y, x);
        CK(cudaGetLastError());
        CK(cudaMemset(dcount, 0, sizeof(*dcount)));
        count_different<<<4096, 256>>>(z, ref, n, dcount);
        unsigned long long diff = 0;
        CK(cudaMemcpy(&diff, dcount, sizeof(diff), cudaMemcpyDeviceToHost));
        float ms = time_ms([&] { v.launch(y, y, x); }, ev);
        if (k == 0) base_ms = ms;
        if (k == 1) map_ms = ms;
        printf("%-6s round %d  %-22s grid %9u block %3u  %8.4f ms  %7.1f GB/s  x%.3f of gs-today  x%.3f of map-today  %s\n",
               opname, round, v.name.c_str(), v.grid, v.block, ms, bytes / (ms * 1e-3) / 1e9, base_ms / ms,
               k >= 1 ? map_ms / ms : 0.0, diff ? "MISMATCH" : "ok");
        printf("{\"bench\": \"elementwise_shape\", \"impl\": \"cuda\", \"device\": \"%s\", \"op\": \"%s\", \"round\": %d, "
               "\"variant\": \"%s\", \"grid\": %u, \"block\": %u, \"n\": %lld, \"ms\": %.5f, \"gbs\": %.2f, "
               "\"mismatches\": %llu}\n",
               device_name, opname, round, v.name.c_str(), v.grid, v.block, n, ms, bytes / (ms * 1e-3) / 1e9, diff);
        fflush(stdout);
    }
}

int main(int argc, char** argv) {
    int lg = argc > 1 ? atoi(argv[1]) : 28;
    int rounds = argc > 2 ? atoi(argv[2]) : 2;
    i64 n = 1LL << lg;
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    snprintf(device_name, sizeof(device_name), "%s", prop.name);
    printf("device %s, %d SMs, n = 2^%d = %lld float32, %d reps (median) after %d warm-up\n", prop.name, sms, lg, n,
           reps, warmup);
    float *x, *y, *z, *ref;
    unsigned long long* dcount;
    CK(cudaMalloc(&x, sizeof(float) * n));
    CK(cudaMalloc(&y, sizeof(float) * n));
    CK(cudaMalloc(&z, sizeof(float) * n));
    CK(cudaMalloc(&ref, sizeof(float) * n));
    CK(cudaMalloc(&dcount, sizeof(*dcount)));
    cudaEvent_t ev[2 * reps];
    for (auto& e : ev) CK(cudaEventCreate(&e));
    for (int r = 1; r <= rounds; r++) {
        sweep("axpy", 12, n, sms, Axpy{1e-3f}, x, y, z, ref, dcount, ev, r);
        sweep("chain", 8, n, sms, Chain{1.5f, 0.25f, 0.75f, 2.0f}, x, y, z, ref, dcount, ev, r);
        fresh(x, y, n);
        float ms = time_ms([&] { CK(cudaMemcpyAsync(y, x, sizeof(float) * n, cudaMemcpyDeviceToDevice)); }, ev);
        printf("copy   round %d  %-22s %34s %8.4f ms  %7.1f GB/s\n", r, "memcpy", "", ms, 8.0 * n / (ms * 1e-3) / 1e9);
        printf("{\"bench\": \"elementwise_shape\", \"impl\": \"cuda\", \"device\": \"%s\", \"op\": \"copy\", \"round\": %d, "
               "\"variant\": \"memcpy\", \"n\": %lld, \"ms\": %.5f, \"gbs\": %.2f}\n",
               device_name, r, n, ms, 8.0 * n / (ms * 1e-3) / 1e9);
    }
    return 0;
}
