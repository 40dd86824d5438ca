-- A warp-shuffle reduction written in Lua (kernels.jit) against the
-- built-in kernels.sum, on the same float32 array:
--
--   warp_sum  each thread sums a grid-stride slice in float64, the lanes
--             of each warp add their sums with kernels.shfl_down, lane 1
--             adds the warp's sum to the total with one atomic; a call is
--             zeroing the total, the launch and reading the total back,
--             as kernels.sum returns its number. GB/s counts the 4·n bytes
--             read. Target: ≥ 0.9 of kernels.sum's bandwidth. Peer: PyTorch's
--             x.sum(dtype=float64) (warp.py).
--
--   glua scripts/bench/warp.lua [log2 elements]
--
-- Defaults: 2^28 elements on the GPU, 2^12 on the CPU backend, where the
-- evaluator runs the warps' lanes in step and the lines only show that
-- both sums agree. Times are host wall time around synchronised calls
-- (B.wall_time). The check is the ok field; the script fails after
-- printing if it is false.
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda, kernels = require("cuda"), require("kernels")

local n = math.floor(2 ^ (tonumber(arg[1]) or (B.gpu and 28 or 12)))
assert(n >= 1, "usage: glua scripts/bench/warp.lua [log2 elements]")
local device = B.device_name()
local reps, samples = B.gpu and 20 or 2, B.gpu and 5 or 2

-- The kernel is the example's, scripts/warp_sum.lua.
local warp_sum = loadfile((arg[0]:match("(.*/)") or "./") .. "../warp_sum.lua")("kernel")

local x = cuda.rand(n, "float32", 11)
local total = cuda.zeros(1, "float64")
-- enough blocks to fill the GPU several times over, few enough that each
-- thread reads many elements before its warp's one atomic
local block = 256
local blocks = math.max(1, math.min(math.ceil(n / block), cuda.device().multiprocessors * 16))
local function run_warp()
  kernels.fill(total, 0)
  warp_sum:launch({ grid = blocks, block = block }, total, x)
  return total:to_table()[1]
end

local got, want = run_warp(), kernels.sum(x)
local err = math.abs(got - want) / math.abs(want)
local t_sum = B.wall_time(function() kernels.sum(x) end, reps, samples)
local t_warp = B.wall_time(run_warp, reps, samples)
local bytes = 4 * n
B.emit({ bench = "warp_sum", impl = "glua", how = "kernels.sum", device = device, n = n, ms = t_sum * 1e3,
  gbs = bytes / t_sum / 1e9 })
local ok = err < 1e-5 -- false for NaN
B.emit({ bench = "warp_sum", impl = "glua", how = "kernels.jit shfl_down", device = device, n = n, ms = t_warp * 1e3,
  gbs = bytes / t_warp / 1e9, fraction_of_sum = t_sum / t_warp, blocks = blocks, block = block, rel_err = err, ok = ok })
x:free()
total:free()
assert(ok, string.format("the warp shuffle sum %g disagrees with kernels.sum %g", got, want))
