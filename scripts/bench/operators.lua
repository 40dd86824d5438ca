-- C = A + B as an operator, a new array every time, against the in-place
-- kernels.add on arrays of the same size, in one run. Effective bandwidth
-- counts 3 × 4 × n bytes an add (two float32 arrays read, one written);
-- the pool's cache serves the operator's allocation, so it should reach
-- at least 0.9 of the in-place kernel's. The new array is freed each
-- iteration, or dropped and left to glua to find. Then kernels.add in
-- place on each other dtype (float64, float16, bfloat16, int32, int64,
-- uint8) on arrays of n elements, which should reach the bandwidth
-- float32's does (fraction_of_float32 near 1) and PyTorch's add_ on the
-- same dtype. Then kernels.copy between dtypes (copy_convert lines, the
-- bytes read and written) and kernels.fill of float32 (fill), against
-- PyTorch's copy_ and fill_.
--   glua scripts/bench/operators.lua [log2 elements]   (default 28 on the GPU, 20 on the CPU)
-- Peer: operators.py.
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda, kernels = require("cuda"), require("kernels")

local n = 2 ^ (tonumber(arg[1]) or (B.gpu and 28 or 20))
local x = cuda.rand(n, "float32", 1)
local y = cuda.rand(n, "float32", 2)
local z = cuda.rand(n, "float32", 3)
local reps = B.gpu and 20 or 3
local bytes = 3 * 4 * n

local function add_in_place() kernels.add(z, x) end
local function add_freed() (x + y):free() end
local function add_dropped() local _ = x + y end

local inplace = B.device_time(add_in_place, reps, 5)
local inplace_wall = B.wall_time(add_in_place, reps, 5)
local gbs, wall_gbs = bytes / inplace / 1e9, bytes / inplace_wall / 1e9
B.emit({ bench = "add_in_place", impl = "glua", dtype = "float32", device = B.device_name(), n = n, ms = inplace * 1e3,
  gbs = gbs, wall_gbs = wall_gbs })
for _, case in ipairs({ { "freed", add_freed }, { "dropped", add_dropped } }) do
  local t = B.device_time(case[2], reps, 5)
  local wall = B.wall_time(case[2], reps, 5)
  B.emit({ bench = "add_operator", impl = "glua", result = case[1], device = B.device_name(), n = n, ms = t * 1e3,
    gbs = bytes / t / 1e9, wall_gbs = bytes / wall / 1e9,
    fraction_of_in_place = (bytes / t / 1e9) / gbs, wall_fraction_of_in_place = (bytes / wall / 1e9) / wall_gbs })
end
x, y, z = nil, nil, nil
collectgarbage()

for _, case in ipairs({ { "float64", 8 }, { "float16", 2 }, { "bfloat16", 2 }, { "int32", 4 }, { "int64", 8 },
  { "uint8", 1 } }) do
  local dt, size = case[1], case[2]
  -- whole numbers from -1000 to 999 (uint8: 0 to 249) in every dtype, as
  -- operators.py's randint draws them, so that both sides add the same
  -- kind of numbers; the integer adds wrap past them in time
  local function ints(seed)
    local f = kernels.scale(cuda.rand(n, "float32", seed), dt == "uint8" and 250 or 2000)
    local i = kernels.copy(cuda.device_array(n, "int32"), f)
    if dt ~= "uint8" then kernels.add_scalar(i, -1000) end
    local a = kernels.copy(cuda.device_array(n, dt), i)
    f:free()
    i:free()
    return a
  end
  local xi, zi = ints(3), ints(4)
  local t = B.device_time(function() kernels.add(zi, xi) end, reps, 5)
  local ibytes = 3 * size * n
  B.emit({ bench = "add_in_place", impl = "glua", dtype = dt, device = B.device_name(), n = n, ms = t * 1e3,
    gbs = ibytes / t / 1e9, fraction_of_float32 = (ibytes / t / 1e9) / gbs })
  xi:free()
  zi:free()
end

local sizes = { float64 = 8, float32 = 4, float16 = 2, bfloat16 = 2, int32 = 4, uint8 = 1 }
local pairs_ = { { "float32", "float16" }, { "float16", "float32" }, { "float32", "bfloat16" }, { "float32", "float64" },
  { "float64", "float32" }, { "float32", "int32" }, { "int32", "float32" }, { "uint8", "float32" }, { "float32", "uint8" } }
for _, p in ipairs(pairs_) do
  local from, to = p[1], p[2]
  local f = kernels.scale(cuda.rand(n, "float32", 5), 200)
  local src = from == "float32" and f or kernels.copy(cuda.device_array(n, from), f)
  local dst = cuda.device_array(n, to)
  local t = B.device_time(function() kernels.copy(dst, src) end, reps, 5)
  local cbytes = (sizes[from] + sizes[to]) * n
  B.emit({ bench = "copy_convert", impl = "glua", from = from, to = to, device = B.device_name(), n = n, ms = t * 1e3,
    gbs = cbytes / t / 1e9 })
  f:free()
  if src ~= f then src:free() end
  dst:free()
end
do
  local f = cuda.device_array(n, "float32")
  local t = B.device_time(function() kernels.fill(f, 1.5) end, reps, 5)
  B.emit({ bench = "fill", impl = "glua", dtype = "float32", device = B.device_name(), n = n, ms = t * 1e3, gbs = 4 * n / t / 1e9 })
  f:free()
end
