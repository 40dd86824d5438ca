-- kernels.map_reduce: fn's values over every element combined by "sum",
-- "prod", "max" or "min" in two deterministic tree kernels. Checked
-- against plain Lua loops on every backend: exact for integers.
local cuda = require("cuda")
local kernels = require("kernels")

local function flat(t)
  if type(t[1]) ~= "table" then return t end
  local out = {}
  for _, row in ipairs(t) do
    for _, v in ipairs(row) do out[#out + 1] = v end
  end
  return out
end

local combine = {
  sum = function(a, b) return a + b end,
  prod = function(a, b) return a * b end,
  max = math.max,
  min = math.min,
}
local start = { sum = 0, prod = 1, max = -math.huge, min = math.huge }

local function lua_reduce(fn, op, xt, yt)
  local acc = start[op]
  for i = 1, #xt do acc = combine[op](acc, fn(xt[i], yt[i])) end
  return acc
end

local function dot(x, y) return x * y end
local function near_one(x, y) return 1 + (x - y) / 1000 end

for seed, dtype in ipairs({ "float32", "float64", "int32" }) do
  for _, shape in ipairs({ { 1 }, { 300 }, { 123, 457 } }) do
    local state = seed
    local function random_array()
      local t = {}
      for i = 1, shape[1] * (shape[2] or 1) do
        state = (state * 1103515245 + 12345) % 2147483648
        local v = state / 2147483648 * 2 - 1
        t[i] = dtype == "int32" and math.floor(v * 100) or v
      end
      local a = cuda.to_device(t, dtype)
      if shape[2] then a = a:reshape(shape) end
      return a
    end
    local x, y = random_array(), random_array()
    local xt, yt = flat(x:to_table()), flat(y:to_table())
    for _, op in ipairs({ "sum", "prod", "max", "min" }) do
      local fn = op == "prod" and near_one or dot
      local got, want = kernels.map_reduce(fn, op, x, y), lua_reduce(fn, op, xt, yt)
      local what = string.format("%s %s over %d elements", dtype, op, #xt)
      if dtype == "int32" and op ~= "prod" then
        check.eq(got, want, what)
      else
        -- float32 factors each round (about 6e-8), and 56211 of them drift
        local tol = dtype == "float32" and (op == "prod" and 1e-3 or 1e-5) or 1e-12
        check.near(got, want, tol, what)
      end
      check.eq(kernels.map_reduce(fn, op, x, y), got, what .. " is the same on a second run")
    end
  end
end

-- a number broadcasts; the sum of an array agrees with kernels.sum
local x = cuda.rand(10000, "float64", 3)
check.near(kernels.map_reduce(function(a, x) return a * x end, "sum", 2, x), 2 * kernels.sum(x), 1e-12, "2*x summed")

-- errors
check.error("has shape 4 and argument 1 (x) has shape 3", kernels.map_reduce, dot, "sum", cuda.zeros(3), cuda.zeros(4))
check.error("not a reduction", kernels.map_reduce, dot, "mean", cuda.zeros(3), cuda.zeros(3))
check.error("at least one argument must be a DeviceArray", kernels.map_reduce, dot, "sum", 1, 2)
check.error("not supported yet", kernels.map_reduce, dot, "sum", cuda.zeros(3), cuda.zeros(3), { axis = 1 })
check.error("max of no elements", kernels.map_reduce, dot, "max", cuda.zeros(0), cuda.zeros(0))
check.eq(kernels.map_reduce(dot, "sum", cuda.zeros(0), cuda.zeros(0)), 0, "the sum of no elements")
