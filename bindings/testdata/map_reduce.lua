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

-- op as a Lua function of two values: no identity, each thread starts
-- from its first value. Float sums within 1e-12 (relative), the rest
-- exact.
local by = {
  sum = function(a, b) return a + b end,
  max = function(acc, v)
    local m = acc
    if v > m then m = v end
    return m
  end,
  absmax = function(a, b) return math.max(math.abs(a), math.abs(b)) end,
}
local function lua_fold(fn, op, xt, yt)
  local acc = fn(xt[1], yt[1])
  for i = 2, #xt do acc = op(acc, fn(xt[i], yt[i])) end
  return acc
end
-- random_array is a dtype's array of shape with values in [-100, 100)
-- (whole numbers for int32) from a linear congruential generator.
local function random_array(dtype, shape, seed)
  local t, state = {}, seed
  for i = 1, shape[1] * (shape[2] or 1) do
    state = (state * 1103515245 + 12345) % 2147483648
    local v = (state / 2147483648 * 2 - 1) * 100
    t[i] = dtype == "int32" and math.floor(v) or v
  end
  local a = cuda.to_device(t, dtype)
  if shape[2] then a = a:reshape(shape) end
  return a
end
for seed, dtype in ipairs({ "float32", "float64", "int32" }) do
  for _, shape in ipairs({ { 1 }, { 300 }, { 123, 457 } }) do
    local x, y = random_array(dtype, shape, 10 + seed), random_array(dtype, shape, 20 + seed)
    local xt, yt = flat(x:to_table()), flat(y:to_table())
    -- the products as the device rounds them (float32 for float32), so
    -- that the reference differs from the result only in the order of
    -- float64 sums
    local products = cuda.zeros(shape, dtype)
    kernels.map(dot, products, x, y)
    local pt, ones = flat(products:to_table()), {}
    for i = 1, #pt do ones[i] = 1 end
    for name, op in pairs(by) do
      local got = kernels.map_reduce(dot, op, x, y)
      local want = #pt > 1 and lua_fold(dot, op, pt, ones) or pt[1]
      local what = string.format("%s by the function %s over %d elements", dtype, name, #xt)
      if name == "sum" and dtype ~= "int32" then
        check.near(got, want, 1e-12, what)
      else
        check.eq(got, want, what)
      end
      check.eq(kernels.map_reduce(dot, op, x, y), got, what .. " is the same on a second run")
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

-- a bad op: each error names kernels.map_reduce, and the runtime goes on
local three = cuda.ones(3)
check.error("kernels.map_reduce: bad argument #2 (\"sum\", \"prod\", \"max\", \"min\" or a function of two values expected, got number)",
  kernels.map_reduce, dot, 42, three, three)
check.error("kernels.map_reduce: bad argument #2 (\"sum\", \"prod\", \"max\", \"min\" or a function of two values expected, got table)",
  kernels.map_reduce, dot, {}, three, three)
check.error("kernels.map_reduce: bad argument #2 (an op function written in a script is expected", kernels.map_reduce, dot, math.max, three, three)
check.error("kernels.map_reduce: jit: testdata/map_reduce.lua:", kernels.map_reduce, dot, function(a) return a end, three, three)
check.error("the op function takes two values (an accumulator and a value) and returns their combination; it takes 3",
  kernels.map_reduce, dot, function(a, b, c) return a + b + c end, three, three)
check.error("a table constructor is not allowed", kernels.map_reduce, dot, function(a, b) return #{ a, b } end, three, three)
check.error("kernels.grid is not allowed in a map function", kernels.map_reduce, dot, function(a, b) return a + kernels.grid(1) end, three, three)
check.error("returns a number, not a boolean", kernels.map_reduce, dot, function(a, b) return a < b end, three, three)
check.error("kernels.map_reduce: a reduction by the function at testdata/map_reduce.lua:", kernels.map_reduce, dot, by.sum, cuda.zeros(0), cuda.zeros(0))
check.eq(kernels.map_reduce(dot, by.sum, three, three), 3, "map_reduce after bad ops")
