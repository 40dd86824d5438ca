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
check.error("max of no elements", kernels.map_reduce, dot, "max", cuda.zeros(0), cuda.zeros(0))

-- "max" and "min" of floats are NumPy's: a NaN anywhere makes the result
-- NaN, in the whole array and along either axis, wherever it lies (Lua's
-- math.max would drop it); all NaNs give NaN, not the start's -inf
local function isnan(v) return v ~= v end
local id = function(v) return v end
for _, dt in ipairs({ "float32", "float64", "float16", "bfloat16" }) do
  for _, at in ipairs({ 1, 2, 500, 3001, 4096 }) do
    local x = cuda.rand(4096, dt, at)
    x[at] = 0 / 0
    for _, op in ipairs({ "max", "min" }) do
      check.eq(isnan(kernels.map_reduce(id, op, x)), true, dt .. " " .. op .. " with a NaN at " .. at)
      local m = x:reshape({ 64, 64 })
      local cols = kernels.map_reduce(id, op, m, { axis = 1 }):to_table()
      local rows = kernels.map_reduce(id, op, m, { axis = 2 }):to_table()
      local r, c = math.floor((at - 1) / 64) + 1, (at - 1) % 64 + 1
      check.eq(isnan(cols[c]) and isnan(rows[r]), true, dt .. " " .. op .. " along the axes with a NaN at " .. at)
      check.eq(not isnan(cols[c % 64 + 1]) and not isnan(rows[r % 64 + 1]), true, dt .. " " .. op .. ": a NaN stays in its column and row")
    end
  end
  check.eq(isnan(kernels.map_reduce(id, "max", cuda.full(10, 0 / 0, dt))), true, dt .. " max of NaNs")
end
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

-- along an axis of 2-D arrays: axis = 1 combines over the rows (one
-- result per column), axis = 2 over the columns (one per row), into a
-- DeviceArray. Checked against plain Lua loops over the products as the
-- device rounds them: exact for integers, max, min and the function max;
-- sums and products within 1e-12 (float64) or 1e-6 (float32 results,
-- rounded once at the store), relative.
local function lua_axis(pt, shape, axis, op)
  local rows, cols = shape[1], shape[2]
  local m, len = rows, cols
  if axis == 1 then m, len = cols, rows end
  local out = {}
  for o = 1, m do
    local acc
    for k = 1, len do
      local v = axis == 1 and pt[(k - 1) * cols + o] or pt[(o - 1) * cols + k]
      if k == 1 then acc = v else acc = op(acc, v) end
    end
    out[o] = acc
  end
  return out
end
local axis_ops = {
  { "sum", dot, combine.sum }, { "max", dot, combine.max }, { "min", dot, combine.min },
  { "prod", near_one, combine.prod },
  { by.sum, dot, by.sum }, { by.max, dot, by.max }, { by.absmax, dot, by.absmax },
}
for seed, dtype in ipairs({ "float32", "float64", "int32" }) do
  for _, shape in ipairs({ { 1, 1 }, { 2, 300 }, { 37, 45 } }) do
    local x, y = random_array(dtype, shape, 30 + seed), random_array(dtype, shape, 40 + seed)
    for _, case in ipairs(axis_ops) do
      local op, fn, lua_op = case[1], case[2], case[3]
      local products = cuda.zeros(shape, fn == near_one and "float64" or dtype)
      kernels.map(fn, products, x, y)
      local pt = flat(products:to_table())
      for axis = 1, 2 do
        local got = kernels.map_reduce(fn, op, x, y, { axis = axis })
        local want = lua_axis(pt, shape, axis, lua_op)
        local what = string.format("%s %s along axis %d of %dx%d", dtype, tostring(op), axis, shape[1], shape[2])
        check.eq(got.shape[1], shape[3 - axis], what .. ": one result per " .. (axis == 1 and "column" or "row"))
        local float_values = dtype ~= "int32" or fn == near_one
        check.eq(got.dtype, float_values and (dtype == "int32" and "float64" or dtype) or "int64", what .. ": the result's dtype")
        local gt = got:to_table()
        local exact = not float_values or (op ~= "sum" and op ~= "prod" and op ~= by.sum)
        for o = 1, #want do
          if exact and dtype ~= "float32" then
            check.eq(gt[o], want[o], what .. ", result " .. o)
          else
            check.near(gt[o], want[o], dtype == "float32" and 1e-6 or 1e-12, what .. ", result " .. o)
          end
        end
        if not exact then
          check.eq(kernels.max_abs_diff(kernels.map_reduce(fn, op, x, y, { axis = axis }), got), 0, what .. " is the same on a second run")
        end
      end
    end
  end
end

-- out: the results converted to its dtype, and returned
local m = cuda.to_device({ { 1, 2, 3 }, { 4, 5, 6 } }, "float64")
local col = cuda.zeros(3, "float32")
check.eq(rawequal(kernels.map_reduce(function(v) return v end, "sum", m, { axis = 1, out = col }), col), true, "out is returned")
check.eq(table.concat(col:to_table(), " "), "5 7 9", "column sums into float32")
local row = cuda.zeros(2, "int32")
kernels.map_reduce(function(v) return math.floor(v) end, "max", m, { axis = 2, out = row })
check.eq(table.concat(row:to_table(), " "), "3 6", "row maxima of integers into int32")
check.eq(kernels.map_reduce(function(v) return v end, "sum", m, {}), 21, "an empty options table reduces everything")
check.eq(table.concat(kernels.map_reduce(function(v) return v end, "sum", cuda.zeros({ 0, 4 }), { axis = 1 }):to_table(), " "), "0 0 0 0", "sums of no rows")
check.eq(kernels.map_reduce(function(v) return v end, "sum", cuda.zeros({ 0, 4 }), { axis = 2 }).shape[1], 0, "no rows, no results")

-- bad axes and outs: each error names kernels.map_reduce, and the runtime goes on
local id = function(v) return v end
check.error("kernels.map_reduce: axis = 3 is out of range: axis is 1 (one result per column) or 2 (one per row) of 2-D arrays", kernels.map_reduce, id, "sum", m, { axis = 3 })
check.error("kernels.map_reduce: axis = 0 is out of range", kernels.map_reduce, id, "sum", m, { axis = 0 })
check.error("kernels.map_reduce: option axis must be 1 or 2, got 1.5", kernels.map_reduce, id, "sum", m, { axis = 1.5 })
check.error("kernels.map_reduce: option axis must be a number, got string", kernels.map_reduce, id, "sum", m, { axis = "rows" })
check.error("kernels.map_reduce: axis = 1 needs 2-D arrays; argument 1 (v) has shape 3", kernels.map_reduce, id, "sum", cuda.zeros(3), { axis = 1 })
check.error("kernels.map_reduce: out has shape 2; the results of axis = 1 over argument 1 (v) (shape 2x3) have shape 3", kernels.map_reduce, id, "sum", m, { axis = 1, out = cuda.zeros(2) })
check.error("kernels.map_reduce: out has shape 3x1;", kernels.map_reduce, id, "sum", m, { axis = 1, out = cuda.zeros({ 3, 1 }) })
check.error("kernels.map_reduce: out is int32; float results need a float dtype", kernels.map_reduce, id, "sum", m, { axis = 1, out = cuda.zeros(3, "int32") })
check.error("kernels.map_reduce: out is uint8; integer results need int32, int64 or a float dtype", kernels.map_reduce, math.floor and function(v) return math.floor(v) end, "sum", m, { axis = 1, out = cuda.zeros(3, "uint8") })
check.error("kernels.map_reduce: option out must be a DeviceArray, got table", kernels.map_reduce, id, "sum", m, { axis = 1, out = {} })
check.error("kernels.map_reduce: option out is for a reduction along an axis; give axis too", kernels.map_reduce, id, "sum", m, { out = col })
check.error("kernels.map_reduce: bad argument #4 (unknown option axes", kernels.map_reduce, id, "sum", m, { axes = 1 })
check.error("kernels.map_reduce: bad argument #3 (DeviceArray or number expected, got table (an options table goes last))", kernels.map_reduce, dot, "sum", { axis = 1 }, m)
check.error("kernels.map_reduce: max of the 0 elements of axis 1 of argument 1 (v) (shape 0x4)", kernels.map_reduce, id, "max", cuda.zeros({ 0, 4 }), { axis = 1 })
check.error("kernels.map_reduce: a reduction by the function at testdata/map_reduce.lua:", kernels.map_reduce, id, by.sum, cuda.zeros({ 4, 0 }), { axis = 2 })
check.error("kernels.map_reduce: jit: testdata/map_reduce.lua:", kernels.map_reduce, id, function(a, b, c) return a end, m, { axis = 2 })
check.eq(table.concat(kernels.map_reduce(id, by.max, m, { axis = 2 }):to_table(), " "), "3 6", "axis reductions after bad ones")

-- integer values compute in int64 whatever they are combined or stored
-- into; an integer % by zero is an error naming the function, from the
-- map function and from an op function, and the runtime goes on
local big = cuda.to_device({ 5001, 100000001, 3037000500, -7 }, "int64")
check.eq(kernels.map_reduce(function(x) return (x * x) % 7 end, "sum", big), 6, "sum of (x * x) % 7")
check.eq(kernels.map_reduce(function(x) return (x * x + 1) - x * x end, "sum", big), 4, "sum of (x * x + 1) - x * x")
local squares = cuda.zeros(2, "float32")
kernels.map_reduce(function(x) return (x * x) % 1000 end, "max", big:reshape({ 2, 2 }), { axis = 2, out = squares })
check.eq(table.concat(squares:to_table(), " "), "1 384", "row maxima of wrapped squares % 1000 into float32")
check.error("map_reduce.lua:" .. debug.getinfo(1).currentline + 1 .. ": integer modulo by zero: the divisor of x % n is 0, in the map function at", kernels.map_reduce,
  function(x, n) return x % n end, "sum", big, 0)
check.error("map_reduce.lua:" .. debug.getinfo(1).currentline + 1 .. ": integer modulo by zero: the divisor of a % b is 0, in the op function at", kernels.map_reduce,
  function(x) return x - x end, function(a, b) return a % b end, big)
check.error("integer modulo by zero: the divisor of x % n is 0", kernels.map_reduce, function(x, n) return x % n end, "sum", big:reshape({ 2, 2 }), 0, { axis = 1 })
check.eq(kernels.map_reduce(function(x, n) return x % n end, "sum", big, 10), 5, "a reduction after the errors")
