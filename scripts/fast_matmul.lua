-- Numba's documented fast_matmul (the shared-memory tiling every CUDA
-- course starts with), written with glua's names for Numba's, and compared
-- with kernels.matmul:
--
--   glua scripts/fast_matmul.lua [n]
--
-- Numba                                   glua
--   TPB = 16 (a global)                     local TPB = 16 (captured: a constant of the kernel)
--   cuda.shared.array((TPB, TPB), float32)  kernels.shared({TPB, TPB}, "float32")
--   cuda.grid(2)                            kernels.grid(2)
--   cuda.threadIdx.x, cuda.gridDim.x        kernels.threadIdx.x, kernels.gridDim.x
--   sA[ty, tx], range(bpg)                  sA[ty][tx], for i = 0, bpg - 1
--   cuda.syncthreads()                      kernels.syncthreads()
-- threadIdx and blockIdx count from 1 in glua, as kernels.grid and Lua's
-- arrays do, so every index below is Numba's plus one.
local cuda = require("cuda")
local kernels = require("kernels")

local TPB = 16

local fast_matmul = kernels.jit(function(A, B, C)
  -- the tiles of A and B this block works on, in shared memory
  local sA = kernels.shared({ TPB, TPB }, "float32")
  local sB = kernels.shared({ TPB, TPB }, "float32")
  local x, y = kernels.grid(2)
  local tx = kernels.threadIdx.x
  local ty = kernels.threadIdx.y
  local bpg = kernels.gridDim.x -- blocks per grid: the grid is square
  local tmp = 0.0
  for i = 0, bpg - 1 do
    -- each thread loads one element of each tile, 0 past the edges
    sA[ty][tx] = 0
    sB[ty][tx] = 0
    if y <= A.shape[1] and tx + i * TPB <= A.shape[2] then
      sA[ty][tx] = A[y][tx + i * TPB]
    end
    if x <= B.shape[2] and ty + i * TPB <= B.shape[1] then
      sB[ty][tx] = B[ty + i * TPB][x]
    end
    kernels.syncthreads() -- the tiles are loaded
    for j = 1, TPB do
      tmp = tmp + sA[ty][j] * sB[j][tx]
    end
    kernels.syncthreads() -- every thread is done with the tiles
  end
  if y <= C.shape[1] and x <= C.shape[2] then
    C[y][x] = tmp
  end
end, { name = "fast_matmul" })

-- scripts/bench/fast_matmul.lua times this kernel: loadfile(this file)("kernel")
-- returns it and TPB, and runs nothing else.
if ... == "kernel" then
  return fast_matmul, TPB
end

local n = math.floor(tonumber(arg[1]) or (cuda.backend() == "cpu" and 64 or 1024))
assert(n >= 1, "usage: glua scripts/fast_matmul.lua [n >= 1]")

local A, B = cuda.rand({ n, n }, "float32", 1), cuda.rand({ n, n }, "float32", 2)
local C, ref = cuda.zeros({ n, n }, "float32"), cuda.zeros({ n, n }, "float32")
local blocks = math.ceil(n / TPB)
local launch = { grid = { blocks, blocks }, block = { TPB, TPB } }
fast_matmul:launch(launch, A, B, C)
kernels.matmul(ref, A, B)

-- ||C - ref|| / ||ref||: the tiles sum in another order than cuBLAS
local diff = C:clone()
kernels.sub(diff, ref)
local rel = kernels.norm(diff) / kernels.norm(ref)
assert(rel < 1e-5, string.format("fast_matmul differs from kernels.matmul by %.2e (relative)", rel))
print(string.format("fast_matmul %dx%d, TPB %d: agrees with kernels.matmul within 1e-5 (relative)", n, n, TPB))

local t = cuda.timer(function() fast_matmul:launch(launch, A, B, C) end)
local tref = cuda.timer(function() kernels.matmul(ref, A, B) end)
print(string.format("  fast_matmul %.3f ms, kernels.matmul %.3f ms", t * 1e3, tref * 1e3))
