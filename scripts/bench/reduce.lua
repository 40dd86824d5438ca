-- Reductions of 2^28 elements (2^16 on the CPU backend) in float32,
-- float64, int32, float16 and bfloat16: kernels.sum, kernels.norm,
-- kernels.max_abs_diff and a kernels.map_reduce sum, and for float32,
-- float16 and bfloat16 map_reduce sums along each axis of three 2-D
-- shapes of the same elements (square, 256 columns, 256 rows;
-- reduce_axis lines): device time per call (B.device_time, ms and gbs)
-- and host time per call (B.wall_time, wall_ms and wall_gbs), GB/s
-- counting the bytes read. Each call waits for its number, as a Lua
-- caller does, so the fair peers are reduce.py's <case>_item lines on
-- either clock, and its plain lines' device time as the kernels' bound.
-- The sum's kernels alone, queued with no number read between calls, are
-- timed beside those plain lines by the kernels package's GPU benchmark:
--   go test -c -o kernels.test ./kernels && GLUA_REQUIRE_CUDA=1 \
--     ./kernels.test -test.run '^$' -test.bench GPUSumKernels -test.benchtime 20x
-- Peer: reduce.py (torch.sum, torch.linalg.norm, (a - b).abs().max(),
-- torch.sum(x, dim)).
--   glua scripts/bench/reduce.lua [log2 elements] [dtype,...]
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda, kernels = require("cuda"), require("kernels")

local n = math.floor(2 ^ (tonumber(arg[1]) or (B.gpu and 28 or 16)))
local dtypes = {}
for d in (arg[2] or "float32,float64,int32,float16,bfloat16"):gmatch("[^,]+") do dtypes[#dtypes + 1] = d end
local device = B.device_name()
local reps, samples = B.gpu and 10 or 2, B.gpu and 5 or 2
local size = { float32 = 4, float64 = 8, float16 = 2, bfloat16 = 2, int32 = 4, int64 = 8, uint8 = 1 }

-- random data of a dtype: uniform [0, 1) for the floats, integers below
-- 2^20 for the others (never all zeros, which a broken kernel could sum).
local function random(dtype, seed)
  if dtype:match("^float") or dtype == "bfloat16" then return cuda.rand(n, dtype, seed) end
  local f = cuda.rand(n, "float32", seed)
  kernels.scale(f, 2 ^ 20)
  local x = cuda.device_array(n, dtype)
  kernels.copy(x, f)
  f:free()
  return x
end

local identity = function(v) return v end
for _, dtype in ipairs(dtypes) do
  local x, y = random(dtype, 1), random(dtype, 2)
  local bytes = size[dtype] * n
  local cases = {
    { "sum", function() return kernels.sum(x) end, bytes },
    { "norm", function() return kernels.norm(x) end, bytes },
    { "max_abs_diff", function() return kernels.max_abs_diff(x, y) end, 2 * bytes },
    { "map_reduce_sum", function() return kernels.map_reduce(identity, "sum", x) end, bytes },
  }
  for _, c in ipairs(cases) do
    local name, fn, read = c[1], c[2], c[3]
    local t = B.device_time(fn, reps, samples)
    local w = B.wall_time(fn, reps, samples)
    B.emit({ bench = "reduce_" .. name, impl = "glua", device = device, dtype = dtype, n = n, ms = t * 1e3,
      gbs = read / t / 1e9, wall_ms = w * 1e3, wall_gbs = read / w / 1e9, value = fn() })
  end
  x:free()
  y:free()
end

-- along an axis: one result per column (axis = 1) or per row (axis = 2),
-- into a float32 out, as torch.sum(x, dim, dtype = float32) gives, for
-- each of the float32, float16 and bfloat16 dtypes asked for
local side = math.floor(2 ^ math.floor(math.log(n) / math.log(2) / 2) + 0.5)
for _, dtype in ipairs(dtypes) do
  if dtype == "float32" or dtype == "float16" or dtype == "bfloat16" then
    local x = random(dtype, 3)
    for _, shape in ipairs({ { side, n / side }, { n / 256, 256 }, { 256, n / 256 } }) do
      local m = x:reshape(shape)
      for axis = 1, 2 do
        local out = cuda.device_array(shape[3 - axis], "float32")
        local fn = function() kernels.map_reduce(identity, "sum", m, { axis = axis, out = out }) end
        local t = B.device_time(fn, reps, samples)
        B.emit({ bench = "reduce_axis", impl = "glua", device = device, dtype = dtype, rows = shape[1], cols = shape[2],
          axis = axis, ms = t * 1e3, gbs = size[dtype] * n / t / 1e9, first = out:copy_to_host()[1] })
      end
    end
    x:free()
  end
end
