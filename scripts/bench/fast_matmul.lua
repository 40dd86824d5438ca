-- Numba's documented fast_matmul (shared-memory tiles, TPB = 16, float32)
-- written in Lua with kernels.jit, against the same kernel in CUDA C
-- compiled through kernels.compile, same launch:
--
--   fast_matmul   wall time of one launch, synchronised (B.wall_time),
--                 and device time from CUDA events, for the Lua kernel,
--                 the CUDA C one with NVRTC's default options, and the
--                 CUDA C one with --fmad=false (the option the Lua kernel
--                 is compiled with, so that float32 rounds as on the CPU);
--                 each checked against kernels.matmul. Target: the Lua
--                 kernel within 1.1× the time of the CUDA C one.
--
--   glua scripts/bench/fast_matmul.lua [n]
--
-- Default n: 4096 on the GPU, 32 on the CPU backend, where only the Lua
-- kernel runs (kernels.compile needs the cuda backend) and the line only
-- shows that it agrees with kernels.matmul.
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda, kernels = require("cuda"), require("kernels")

local n = math.floor(tonumber(arg[1]) or (B.gpu and 4096 or 32))
assert(n >= 1, "usage: glua scripts/bench/fast_matmul.lua [n >= 1]")
local device = B.device_name()
local reps, samples = B.gpu and 5 or 1, B.gpu and 5 or 1

-- The Lua kernel is the example's, scripts/fast_matmul.lua.
local fast_matmul, TPB = loadfile((arg[0]:match("(.*/)") or "./") .. "../fast_matmul.lua")("kernel")

-- The same kernel in CUDA C, as Numba's documentation writes it, 0-based,
-- int indices, TPB a compile-time constant as in the Lua kernel.
local fast_matmul_c = [[
#define TPB 16
extern "C" __global__ void fast_matmul_c(const float *A, const float *B, float *C, int M, int N, int K) {
    __shared__ float sA[TPB][TPB];
    __shared__ float sB[TPB][TPB];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    int bpg = gridDim.x;
    float tmp = 0.0f;
    for (int i = 0; i < bpg; i++) {
        sA[ty][tx] = 0.0f;
        sB[ty][tx] = 0.0f;
        if (y < M && tx + i * TPB < K) sA[ty][tx] = A[y * K + tx + i * TPB];
        if (x < N && ty + i * TPB < K) sB[ty][tx] = B[(ty + i * TPB) * N + x];
        __syncthreads();
        for (int j = 0; j < TPB; j++) tmp += sA[ty][j] * sB[j][tx];
        __syncthreads();
    }
    if (y < M && x < N) C[y * N + x] = tmp;
}
]]

local A, Bm = cuda.rand({ n, n }, "float32", 1), cuda.rand({ n, n }, "float32", 2)
local C, ref = cuda.device_array({ n, n }, "float32"), cuda.device_array({ n, n }, "float32")
kernels.matmul(ref, A, Bm)
local blocks = math.ceil(n / TPB)
local launch = { grid = { blocks, blocks }, block = { TPB, TPB } }
local flops = 2 * n ^ 3
local failed = {}

local function measure(how, fn)
  fn()
  local diff = C:clone()
  kernels.sub(diff, ref)
  local err = kernels.norm(diff) / kernels.norm(ref)
  diff:free()
  local ok = err < 1e-5 -- false for NaN
  if not ok then failed[#failed + 1] = string.format("%s: rel. error %g", how, err) end
  local wall = B.wall_time(fn, reps, samples, 1)
  local dev = B.gpu and B.device_time(fn, reps, samples, 1) or wall
  return wall, { bench = "fast_matmul", impl = "glua", how = how, device = device, n = n, tpb = TPB,
    ms = wall * 1e3, device_ms = dev * 1e3, tflops = flops / wall / 1e12, rel_err = err, ok = ok }
end

local t_lua, lua_line = measure("kernels.jit", function() fast_matmul:launch(launch, A, Bm, C) end)
if B.gpu then
  for i, v in ipairs({ { "kernels.compile", {} }, { "kernels.compile fmad=false", { "--fmad=false" } } }) do
    local k = kernels.compile(fast_matmul_c, "fast_matmul_c", { options = v[2] })
    local t, line = measure(v[1], function() k:launch(launch, A, Bm, C, n, n, n) end)
    B.emit(line)
    if i == 1 then lua_line.time_over_cuda_c = t_lua / t end
    if i == 2 then lua_line.time_over_cuda_c_fmad_false = t_lua / t end
  end
end
B.emit(lua_line)
for _, a in ipairs({ A, Bm, C, ref }) do a:free() end
assert(#failed == 0, "results disagree:\n" .. table.concat(failed, "\n"))
