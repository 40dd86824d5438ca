-- The Numba seed's three matrix-product kernels, written in Lua with
-- kernels.jit instead of Python's @cuda.jit, each compared with
-- kernels.matmul:
--
--   glua scripts/numba_kernels.lua [n] [iterations]
--
-- (a) naive:        inputs uploaded and C allocated inside the loop;
-- (b) preallocated: device arrays made once, new data copied into them;
-- (c) in place:     C[row][col] = C[row][col] + tmp, accumulated on the device.
-- On the cuda backend the kernels are CUDA C compiled by NVRTC at their
-- first launch; on the CPU backend the jit evaluator runs them.
local cuda = require("cuda")
local kernels = require("kernels")

local n = math.floor(tonumber(arg[1]) or 256)
local iters = math.floor(tonumber(arg[2]) or 5)
assert(n >= 1 and iters >= 1, "usage: glua scripts/numba_kernels.lua [n >= 1] [iterations >= 1]")

-- Numba's matmul: one thread per element of C.
local matmul = kernels.jit(function(A, B, C)
  local row, col = kernels.grid(2)
  if row <= C.shape[1] and col <= C.shape[2] then
    local tmp = 0.
    for k = 1, A.shape[2] do
      tmp = tmp + A[row][k] * B[k][col]
    end
    C[row][col] = tmp
  end
end, { name = "matmul" })

-- The in-place variant adds the product into C.
local matmul_acc = kernels.jit(function(A, B, C)
  local row, col = kernels.grid(2)
  if row <= C.shape[1] and col <= C.shape[2] then
    local tmp = 0.
    for k = 1, A.shape[2] do
      tmp = tmp + A[row][k] * B[k][col]
    end
    C[row][col] = C[row][col] + tmp
  end
end, { name = "matmul_acc" })

local threads = 16
local launch = { grid = { math.ceil(n / threads), math.ceil(n / threads) }, block = { threads, threads } }

local inputs = {}
for k = 1, 2 do
  local A, B = cuda.rand({ n, n }, "float32", 2 * k), cuda.rand({ n, n }, "float32", 2 * k + 1)
  inputs[k] = { A = A:copy_to_host(), B = B:copy_to_host() }
end
local function input(i) return inputs[(i - 1) % 2 + 1] end

-- rel is ||x - y|| / ||y||, on the device.
local function rel(x, y)
  local d = x:clone()
  kernels.sub(d, y)
  return kernels.norm(d) / kernels.norm(y)
end

local function timed(label, fn)
  cuda.synchronize()
  local t0 = os.clock()
  local err = fn()
  cuda.synchronize()
  print(string.format("%-14s %10.3f ms/iter   rel. error against kernels.matmul %.2g", label,
    1000 * (os.clock() - t0) / iters, err))
  assert(err < 1e-5, label .. " disagrees with kernels.matmul")
end

print(string.format("Numba's matmul kernels in Lua, %dx%d float32, %d iterations, %s backend", n, n, iters,
  cuda.backend()))

timed("naive", function()
  local C, A, B
  for i = 1, iters do
    A, B = cuda.to_device(input(i).A), cuda.to_device(input(i).B)
    C = cuda.device_array({ n, n }, "float32")
    matmul:launch(launch, A, B, C)
  end
  local ref = cuda.device_array({ n, n }, "float32")
  kernels.matmul(ref, A, B)
  return rel(C, ref)
end)

local A, B = cuda.device_array({ n, n }, "float32"), cuda.device_array({ n, n }, "float32")
local C, ref = cuda.device_array({ n, n }, "float32"), cuda.device_array({ n, n }, "float32")
timed("preallocated", function()
  for i = 1, iters do
    A:copy_from(input(i).A)
    B:copy_from(input(i).B)
    matmul:launch(launch, A, B, C)
  end
  kernels.matmul(ref, A, B)
  return rel(C, ref)
end)

timed("in place", function()
  kernels.fill(C, 0)
  kernels.fill(ref, 0)
  for i = 1, iters do
    A:copy_from(input(i).A)
    B:copy_from(input(i).B)
    matmul_acc:launch(launch, A, B, C)
    kernels.matmul(ref, A, B, { beta = 1 })
  end
  return rel(C, ref)
end)
print(string.format("kernels compiled: %d, found in the disk cache: %d", kernels.cache_stats().compiles,
  kernels.cache_stats().cache_hits))
