-- kernels.map: one fused elementwise kernel from a Lua function of
-- elements. On the CPU backend the evaluator runs it, on the GPU NVRTC
-- compiles it; both must agree with plain Lua loops over the elements.
local cuda = require("cuda")
local kernels = require("kernels")

-- plain Lua: out[i] = fn(a[i], b[i], ...) over tables (numbers broadcast)
local function lua_map(fn, n, ...)
  local args = { ... }
  local out = {}
  for i = 1, n do
    local vals = {}
    for k, a in ipairs(args) do
      if type(a) == "table" then vals[k] = a[i] else vals[k] = a end
    end
    out[i] = fn((table.unpack or unpack)(vals))
  end
  return out
end

local function flat(t)
  if type(t[1]) ~= "table" then return t end
  local out = {}
  for _, row in ipairs(t) do
    for _, v in ipairs(row) do out[#out + 1] = v end
  end
  return out
end

local function axpby(x, y) return 2 * x * y + 1 end
local function clamp(a, x, y)
  local d = a * x - y
  if d < 0 then d = -d end
  return math.min(d, 10)
end

for seed, dtype in ipairs({ "float32", "float64", "int32" }) do
  local shape = { 37, 29 }
  -- inputs from tables, through a small generator, so every backend sees
  -- the same values
  local state = seed
  local function random_table(scale)
    local t = {}
    for r = 1, shape[1] do
      t[r] = {}
      for c = 1, shape[2] do
        state = (state * 1103515245 + 12345) % 2147483648
        local v = state / 2147483648 * 2 - 1
        t[r][c] = dtype == "int32" and math.floor(v * scale) or v
      end
    end
    return t
  end
  local x, y = cuda.to_device(random_table(1000), dtype), cuda.to_device(random_table(1000), dtype)
  local z = cuda.zeros(shape, dtype)
  check.eq(kernels.map(axpby, z, x, y), z, dtype .. " map returns out")
  local n = 37 * 29
  local xt, yt, zt = flat(x:to_table()), flat(y:to_table()), flat(z:to_table())
  local want = lua_map(axpby, n, xt, yt)
  local tol = ({ float32 = 1e-6, float64 = 0, int32 = 0 })[dtype]
  for i = 1, n do
    check.near(zt[i], want[i], tol, dtype .. " map 2*x*y+1 element " .. i)
  end
  -- numbers broadcast, and the function has locals and an if
  local a = dtype == "int32" and 3 or 0.5
  kernels.map(clamp, z, a, x, y)
  zt = flat(z:to_table())
  want = lua_map(clamp, n, a, xt, yt)
  for i = 1, n do
    check.near(zt[i], want[i], tol, dtype .. " map with a broadcast number, element " .. i)
  end
end

-- an inline closure in a loop is one translation, reused
local v = cuda.zeros(100, "float64")
for k = 1, 3 do
  kernels.map(function(v, k) return v + k end, v, v, k)
end
check.eq(v:to_table()[100], 6, "in-place map in a loop")

-- out's dtype is the result's: float work stored into int32 truncates
local ints = cuda.zeros(4, "int32")
kernels.map(function(x) return x * 2.75 end, ints, cuda.full(4, 2, "float32"))
check.eq(ints:to_table()[1], 5, "float result stored into int32 truncates")

-- integer elements and numbers compute in int64, whatever out's dtype:
-- wrapping as NumPy's, % floored as Lua's, / a float64 division
local big = cuda.to_device({ 5001, 100000001, 3037000500, -7 }, "int64")
local m32, m64 = cuda.zeros(4, "float32"), cuda.zeros(4, "float64")
kernels.map(function(x) return (x * x) % 7 end, m32, big)
check.eq(table.concat(m32:to_table(), " "), "2 2 2 0", "(x * x) % 7 into float32")
kernels.map(function(x) return (x * x + 1) - x * x end, m64, big)
check.eq(table.concat(m64:to_table(), " "), "1 1 1 1", "(x * x + 1) - x * x into float64")
kernels.map(function(x, n) return (x * x) % n end, m64, big, 1000)
check.eq(table.concat(m64:to_table(), " "), "1 1 384 49", "int64 squares wrap")
kernels.map(function(x, n) return x % n end, m64, big, -3)
check.eq(table.concat(m64:to_table(), " "), "0 -1 0 -1", "% takes the divisor's sign")
kernels.map(function(x) return x / 2 end, m64, big)
check.eq(table.concat(m64:to_table(), " "), "2500.5 50000000.5 1518500250 -3.5", "/ of integers is float64")
kernels.map(function(i) return (i * i) % 7 end, m32, 5001)
check.eq(m32:to_table()[4], 2, "a number argument")
check.error("map.lua:" .. debug.getinfo(1).currentline + 1 .. ": integer modulo by zero: the divisor of x % n is 0, in the map function at", kernels.map,
  function(x, n) return x % n end, m32, big, 0)
check.eq(kernels.map(function(x, n) return x % n end, m32, big, 10):to_table()[2], 1, "a map after the error")
-- math.floor and math.ceil give int64s: of NaN, an infinity or a float
-- beyond 2^63 in magnitude, which no int64 holds, they stop the map with an
-- error naming the call, never a saturated number; elsewhere they are
-- exact, to -2^63 and just below 2^63
local edges = cuda.to_device({ -2 ^ 63, 2 ^ 63 - 1024, -2.5, 2.5 }, "float64")
local ints = cuda.zeros(4, "int64")
kernels.map(function(v) return math.floor(v) end, ints, edges)
check.eq(table.concat(ints:to_table(), " "), "-9.2233720368548e+18 9.2233720368548e+18 -3 2", "floor at int64's edges")
kernels.map(function(v) return math.ceil(v) end, ints, edges)
check.eq(ints:to_table()[3], -2, "ceil of -2.5")
for _, bad in ipairs({ 0 / 0, 1 / 0, -1 / 0, 2 ^ 63, -1e300 }) do
  for _, fn in ipairs({ "floor", "ceil" }) do
    local xs = cuda.to_device({ 1, 2, bad, 4 }, "float64")
    local f = fn == "floor" and function(v) return math.floor(v) end or function(v) return math.ceil(v) end
    check.error("math." .. fn .. "(v) has no int64 value (its argument is NaN, an infinity or beyond 2^63 in magnitude), in the map function at",
      kernels.map, f, cuda.zeros(4, "float64"), xs)
  end
end
-- Lua's integer division, an integer over a constant above 1, needs no check
kernels.map(function(x) return math.floor(x / 2) end, m64, big)
check.eq(table.concat(m64:to_table(), " "), "2500 50000000 1518500250 -4", "math.floor(x / 2) of integers")

-- math.min and math.max give their first argument unless the second is
-- strictly less (greater), as Lua's do, signed zeros included: min(0, -0)
-- is 0 and max(-0, 0) is -0, where a literal, a number argument or an
-- element is the zero (a number argument -0 is the integer 0, as a
-- literal -0 is); a compiler that made them a min or max instruction
-- would give the other zero.
local zero = 0
local minus_zero = -zero
local signed = { zero, minus_zero, 1, -1, 0 / 0, -2.5 }
for _, dtype in ipairs({ "float32", "float64" }) do
  local xs, out = cuda.to_device(signed, dtype), cuda.zeros(#signed, dtype)
  for name, fn in pairs({
    ["math.min(0, x)"] = function(x, z) return math.min(0, x) end,
    ["math.max(0, x)"] = function(x, z) return math.max(0, x) end,
    ["math.min(x, 0)"] = function(x, z) return math.min(x, 0) end,
    ["math.max(x, 0)"] = function(x, z) return math.max(x, 0) end,
    ["math.min(0, -x - x)"] = function(x, z) return math.min(0, -(x / 1) - x) end,
    ["math.max(-x, x)"] = function(x, z) return math.max(-x, x) end,
    ["math.min(z, x)"] = function(x, z) return math.min(z, x) end,
    ["math.max(z, x)"] = function(x, z) return math.max(z, x) end,
  }) do
    for _, z in ipairs({ zero, minus_zero }) do
      kernels.map(fn, out, xs, z)
      local got = out:to_table()
      for i, x in ipairs(signed) do
        local want = fn(x, check.int(z))
        if not check.same_bits(got[i], want) then
          error(string.format("%s %s with x = %s, z = %s: %s, plain Lua %s", dtype, name, x, z, got[i], want))
        end
      end
    end
  end
end

-- errors name both shapes, and the line of a construct outside the subset
check.error("has shape 3x4 and out has shape 12", kernels.map, axpby, cuda.zeros(12), cuda.zeros({ 3, 4 }), 1)
check.error("map.lua:" .. debug.getinfo(1).currentline + 1 .. ": a table constructor", kernels.map, function(x)
  local t = { x }
  return x
end, cuda.zeros(3), cuda.zeros(3))
check.error("takes 2 arguments", kernels.map, axpby, cuda.zeros(3), cuda.zeros(3))
check.error("DeviceArray expected", kernels.map, axpby, cuda.zeros(3), cuda.zeros(3), "x")
-- the runtime is usable afterwards
check.eq(kernels.map(axpby, cuda.zeros(2), 1, 2):to_table()[2], 5, "map of numbers only fills out")
