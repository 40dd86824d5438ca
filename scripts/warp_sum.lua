-- A sum with warp shuffles, the reduction CUDA's and Numba's guides build
-- without shared memory, written in Lua with kernels.jit and compared with
-- kernels.sum:
--
--   glua scripts/warp_sum.lua [n]
--
-- Each thread sums a grid-stride slice of x. The 32 lanes of each warp
-- then add their partial sums with kernels.shfl_down, halving the distance
-- each step (16, 8, 4, 2, 1): after five steps lane 1 holds the warp's
-- sum, with no shared memory and no barrier, and adds it to the total with
-- one atomic per warp. On the CPU backend the jit evaluator runs each
-- warp's lanes in step, so the shuffles give the GPU's answer.
local cuda, kernels = require("cuda"), require("kernels")

local warp_sum = kernels.jit(function(total, x)
  local i = kernels.grid(1)
  local stride = kernels.gridsize(1)
  local s = 0.0 -- float64, as total: the partial sums lose nothing
  while i <= #x do
    s = s + x[i]
    i = i + stride
  end
  local offset = math.floor(kernels.warpsize / 2)
  while offset >= 1 do
    s = s + kernels.shfl_down(s, offset)
    offset = math.floor(offset / 2)
  end
  if kernels.laneid() == 1 then
    kernels.atomic_add(total, 1, s)
  end
end, { name = "warp_sum" })

-- scripts/bench/warp.lua times this kernel: loadfile(this file)("kernel")
-- returns it, and runs nothing else.
if ... == "kernel" then
  return warp_sum
end

local n = math.floor(tonumber(arg[1]) or 2 ^ 20)
assert(n >= 1, "usage: glua scripts/warp_sum.lua [n >= 1]")

local x = cuda.rand(n, "float32", 7)
local total = cuda.zeros(1, "float64")
local block = 256
local blocks = math.min(math.ceil(n / block), 1024)
warp_sum:launch({ grid = blocks, block = block }, total, x)
local got, want = total:to_table()[1], kernels.sum(x)
local err = math.abs(got - want) / math.abs(want)
print(string.format("warp shuffle sum of %d float32: %.6f", n, got))
print(string.format("kernels.sum:                    %.6f", want))
print(string.format("rel. error %.2e (%d blocks of %d threads, %d warps)", err, blocks, block, blocks * block / 32))
assert(err < 1e-5, "the warp shuffle sum disagrees with kernels.sum")
