-- Kernels written in Lua against what they stand in for, in one run:
--
--   jit_axpy          kernels.map(function(a, x, y) return a * x + y end, y, a, x, y)
--                     against the built-in kernels.axpy on the same arrays;
--                     GB/s counts 3 × 4 × n bytes for both (x and y read, y
--                     written). Target: the map reaches ≥ 0.98 of axpy.
--   jit_chain         the five-step chain of scripts/fused.lua,
--                     y = ((a·x + b)·x - c) / d, as one kernels.map against
--                     five built-in kernels in place; GB/s is effective
--                     bandwidth, x read and y written once (2 × 4 × n).
--                     Peer: PyTorch eager and torch.compile (jit.py).
--                     Target: the map ≥ 3× PyTorch eager and at most
--                     torch.compile's time.
--   jit_matmul        the Numba seed's naive matmul, one thread per element
--                     of C in 16×16 blocks, written in Lua (kernels.jit)
--                     against the same algorithm in CUDA C (kernels.compile),
--                     same launch; both checked against kernels.matmul.
--                     Target: Lua ≤ 1.1× the time of CUDA C.
--   jit_first_launch  wall time of the first launch of each kernel above:
--                     translation and NVRTC (0 compiles and a disk cache hit
--                     if the cache already held it). Target: ≤ 250 ms each.
--   jit_cache         the run's kernel compiles and disk cache hits. Target:
--                     0 compiles on a second run on the same cache.
--
--   glua scripts/bench/jit.lua [log2 elements] [matmul n] [run]
--
-- Defaults: 2^28 elements and 2048² on the GPU, 2^12 and 24² on the CPU
-- backend, where the kernels run in the jit's evaluator and the lines only
-- show that everything agrees. run (default 1) is copied into the
-- jit_cache line. For first launches that really compile, point the kernel
-- cache at a fresh directory: GLUA_KERNEL_CACHE=$(mktemp -d) glua
-- scripts/bench/jit.lua; run.sh does, then runs the script again on the
-- same directory and keeps that run's jit_cache line (run = 2).
-- Times are device time from CUDA events (B.device_time), the first
-- launches host wall time around a synchronised call (B.wall_time).
-- Each check is an ok field; the script fails after printing if one is false.
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda, kernels = require("cuda"), require("kernels")

local n = math.floor(2 ^ (tonumber(arg[1]) or (B.gpu and 28 or 12)))
local m = math.floor(tonumber(arg[2]) or (B.gpu and 2048 or 24))
local run = math.floor(tonumber(arg[3]) or 1)
assert(n >= 1 and m >= 1, "usage: glua scripts/bench/jit.lua [log2 elements] [matmul n >= 1] [run]")
local device = B.device_name()
local reps, samples = B.gpu and 20 or 2, B.gpu and 5 or 2
local mm_reps = B.gpu and 5 or 1

-- Tolerances of ||out - ref|| / ||ref||: the elementwise kernels round
-- after every float32 operation on both sides (--fmad=false), so they
-- agree to the last bit or two; a matmul sums in another order than
-- cuBLAS, within DESIGN.md's 1e-5 for float32.
local elementwise_tol, matmul_tol = 1e-6, 1e-5
local failed = {}

-- rel is ||u - v|| / ||v||, on the device.
local function rel(u, v)
  local diff = u:clone()
  kernels.sub(diff, v)
  local r = kernels.norm(diff) / kernels.norm(v)
  diff:free()
  return r
end

local function check(what, err, tol)
  local ok = err < tol -- false for NaN
  if not ok then failed[#failed + 1] = string.format("%s: rel. error %g, tolerance %g", what, err, tol) end
  return ok
end

-- The kernels. Each function is written once, so that every call below
-- reuses its translation.
local alpha = 1e-3
local function axpy_fn(a, x, y) return a * x + y end
local ca, cb, cc, cd = 1.5, 0.25, 0.75, 2 -- as scripts/fused.lua
local function chain_fn(x, a, b, c, d) return ((x * a + b) * x - c) / d end

local matmul_lua = kernels.jit(function(A, B, C)
  local row, col = kernels.grid(2)
  if row <= C.shape[1] and col <= C.shape[2] then
    local tmp = 0.
    for k = 1, A.shape[2] do
      tmp = tmp + A[row][k] * B[k][col]
    end
    C[row][col] = tmp
  end
end, { name = "matmul_lua" })

-- The same in CUDA C, as one would write it by hand: row from x as in the
-- Lua kernel (Numba's cuda.grid(2)), int indices, default NVRTC options.
local matmul_c_source = [[
extern "C" __global__ void matmul_c(const float *A, const float *B, float *C, int M, int N, int K) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float tmp = 0.0f;
        for (int k = 0; k < K; k++) {
            tmp += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = tmp;
    }
}
]]
local function matmul_launch(size)
  return { grid = { math.ceil(size / 16), math.ceil(size / 16) }, block = { 16, 16 } }
end

-- 4. First launches, before anything else uses these kernels, on small
-- arrays: a kernel's translation depends on its arguments' dtypes and
-- ranks, not their sizes. The built-ins the arrays need are loaded first.
do
  local small, sm = 1024, 32
  local xs, ys = cuda.rand(small, "float32", 1), cuda.rand(small, "float32", 2)
  local As, Bs = cuda.rand({ sm, sm }, "float32", 3), cuda.rand({ sm, sm }, "float32", 4)
  local Cs = cuda.device_array({ sm, sm }, "float32")
  cuda.synchronize()
  local matmul_c
  local firsts = {
    { "kernels.map axpy", function() kernels.map(axpy_fn, ys, alpha, xs, ys) end },
    { "kernels.map chain", function() kernels.map(chain_fn, ys, xs, ca, cb, cc, cd) end },
    { "kernels.jit matmul", function() matmul_lua:launch(matmul_launch(sm), As, Bs, Cs) end },
  }
  if B.gpu then -- kernels.compile needs the cuda backend; it compiles at the call, not the launch
    firsts[#firsts + 1] = { "kernels.compile matmul", function()
      matmul_c = matmul_c or kernels.compile(matmul_c_source, "matmul_c")
      matmul_c:launch(matmul_launch(sm), As, Bs, Cs, sm, sm, sm)
    end }
  end
  for _, f in ipairs(firsts) do
    local before = kernels.cache_stats()
    local first = B.wall_time(f[2], 1, 1, 0)
    local after = kernels.cache_stats()
    local second = B.wall_time(f[2], 1, 1, 0)
    B.emit({ bench = "jit_first_launch", impl = "glua", how = f[1], device = device, ms = first * 1e3,
      second_ms = second * 1e3, compiles = after.compiles - before.compiles,
      cache_hits = after.cache_hits - before.cache_hits })
  end
  for _, a in ipairs({ xs, ys, As, Bs, Cs }) do a:free() end
end

-- 1. The map against the built-in axpy.
local x = cuda.rand(n, "float32", 1)
do
  local y = cuda.rand(n, "float32", 2)
  local want, got = y:clone(), y:clone()
  kernels.axpy(want, alpha, x)
  kernels.map(axpy_fn, got, alpha, x, got)
  local err = rel(got, want)
  want:free()
  got:free()
  local builtin = B.device_time(function() kernels.axpy(y, alpha, x) end, reps, samples)
  local map = B.device_time(function() kernels.map(axpy_fn, y, alpha, x, y) end, reps, samples)
  local bytes = 3 * 4 * n
  B.emit({ bench = "jit_axpy", impl = "glua", how = "kernels.axpy", device = device, n = n, ms = builtin * 1e3,
    gbs = bytes / builtin / 1e9 })
  B.emit({ bench = "jit_axpy", impl = "glua", how = "kernels.map", device = device, n = n, ms = map * 1e3,
    gbs = bytes / map / 1e9, fraction_of_axpy = builtin / map, rel_err = err,
    ok = check("jit_axpy: kernels.map against kernels.axpy", err, elementwise_tol) })
  y:free()
end

-- 2. The chain as one map against five built-ins in place.
do
  local fused, inplace = cuda.device_array(n, "float32"), cuda.device_array(n, "float32")
  local function run_fused() kernels.map(chain_fn, fused, x, ca, cb, cc, cd) end
  local function run_inplace()
    kernels.fill(inplace, cb)
    kernels.axpy(inplace, ca, x) -- a·x + b
    kernels.mul(inplace, x)
    kernels.add_scalar(inplace, -cc)
    kernels.div_scalar(inplace, cd)
  end
  run_fused()
  run_inplace()
  local err = rel(inplace, fused)
  local t_inplace = B.device_time(run_inplace, reps, samples)
  local t_fused = B.device_time(run_fused, reps, samples)
  local bytes = 2 * 4 * n
  B.emit({ bench = "jit_chain", impl = "glua", how = "built-ins in place", device = device, n = n,
    ms = t_inplace * 1e3, gbs = bytes / t_inplace / 1e9, launches = 5 })
  B.emit({ bench = "jit_chain", impl = "glua", how = "kernels.map", device = device, n = n, ms = t_fused * 1e3,
    gbs = bytes / t_fused / 1e9, launches = 1, speedup_over_in_place = t_inplace / t_fused, rel_err = err,
    ok = check("jit_chain: built-ins in place against kernels.map", err, elementwise_tol) })
  fused:free()
  inplace:free()
end
x:free()

-- 3. The naive matmul in Lua against the same in CUDA C.
do
  local A, Bm = cuda.rand({ m, m }, "float32", 3), cuda.rand({ m, m }, "float32", 4)
  local C, ref = cuda.device_array({ m, m }, "float32"), cuda.device_array({ m, m }, "float32")
  local launch = matmul_launch(m)
  local flops = 2 * m ^ 3
  kernels.matmul(ref, A, Bm)
  local function measure(how, fn, extra)
    fn()
    local err = rel(C, ref)
    local t = B.device_time(fn, mm_reps, samples, 1)
    local line = { bench = "jit_matmul", impl = "glua", how = how, device = device, n = m, ms = t * 1e3,
      tflops = flops / t / 1e12, rel_err = err, ok = check("jit_matmul: " .. how .. " against kernels.matmul", err,
        matmul_tol) }
    for k, v in pairs(extra or {}) do line[k] = v end
    return t, line
  end
  local t_lua, lua_line = measure("kernels.jit", function() matmul_lua:launch(launch, A, Bm, C) end)
  if B.gpu then
    local variants = {
      { "kernels.compile", {} },
      -- the options the Lua kernel is compiled with: separate rounding of
      -- the product and the sum, as the CPU evaluator rounds
      { "kernels.compile fmad=false", { "--fmad=false" } },
    }
    for i, v in ipairs(variants) do
      local k = kernels.compile(matmul_c_source, "matmul_c", { options = v[2] })
      local t, line = measure(v[1], function() k:launch(launch, A, Bm, C, m, m, m) end)
      B.emit(line)
      if i == 1 then lua_line.time_over_cuda_c = t_lua / t end
    end
  end
  B.emit(lua_line)
  local t_blas = B.device_time(function() kernels.matmul(C, A, Bm) end, mm_reps, samples, 1)
  B.emit({ bench = "jit_matmul", impl = "glua", how = "kernels.matmul", device = device, n = m, ms = t_blas * 1e3,
    tflops = flops / t_blas / 1e12 })
  for _, a in ipairs({ A, Bm, C, ref }) do a:free() end
end

-- 5. graph100: 100 tiny in-place adds on a 16-element array, launched
-- eagerly and recorded once with cuda.graph and replayed: µs per kernel,
-- host wall time around a synchronised loop (the cost as the Lua loop
-- sees it) and device time from events. Peer: the same in a PyTorch CUDA
-- graph (jit.py).
do
  local kernels_n = 100
  local small, one = cuda.zeros(16), cuda.full(16, 1)
  local function hundred_adds()
    for _ = 1, kernels_n do kernels.add(small, one) end
  end
  local g_reps = B.gpu and 100 or 2
  local wall = B.wall_time(hundred_adds, g_reps, samples)
  local dev = B.device_time(hundred_adds, g_reps, samples)
  B.emit({ bench = "graph100", impl = "glua", how = "eager", device = device, kernels = kernels_n,
    us_per_kernel = wall / kernels_n * 1e6, device_us_per_kernel = dev / kernels_n * 1e6 })
  local g = cuda.graph(hundred_adds)
  kernels.fill(small, 0)
  g:launch()
  local got = small:copy_to_host()
  local err = 0
  for i = 1, 16 do err = math.max(err, math.abs(got[i] - kernels_n)) end
  local ok = check("graph100 replay", err, 0.5)
  local gwall = B.wall_time(function() g:launch() end, g_reps, samples)
  local gdev = B.device_time(function() g:launch() end, g_reps, samples)
  B.emit({ bench = "graph100", impl = "glua", how = "cuda graph", device = device, kernels = kernels_n,
    us_per_kernel = gwall / kernels_n * 1e6, device_us_per_kernel = gdev / kernels_n * 1e6, ok = ok,
    replays = tostring(g):find("again") ~= nil })
  g:free()
end

local stats = kernels.cache_stats()
B.emit({ bench = "jit_cache", impl = "glua", device = device, run = run, compiles = stats.compiles,
  cache_hits = stats.cache_hits, kernel_cache = os.getenv("GLUA_KERNEL_CACHE") or "config" })
assert(#failed == 0, "results disagree:\n" .. table.concat(failed, "\n"))
