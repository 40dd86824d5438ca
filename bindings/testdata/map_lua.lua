-- kernels.map against plain Lua on random expressions: each program is a
-- function of three float64 elements built from arithmetic, math calls and
-- constants, run by kernels.map over edge values (zeros, infinities, NaN,
-- huge and tiny numbers, integers past 2^53) and by plain Lua element by
-- element. Every element must be the same number (any NaN matches any
-- NaN). Every fourth function is also reduced by kernels.map_reduce's
-- "max" and "min", which must give NumPy's max and min of plain Lua's
-- values, and every fourth other one along each axis of the same
-- elements as 8 x 8 matrices. The functions exact on both backends run everywhere; the CPU
-- backend, whose evaluator computes each math function as Lua's math
-- library does, also runs the transcendental ones, which CUDA computes
-- within a few ulps (docs/kernel-language.md).
--
-- A literal without a point and math.floor's value are int64s in a map,
-- which has no minus zero and does not round. The plain Lua copy sends
-- each integer value through I, which turns -0 into 0 and drops the
-- program where an integer is NaN (an integer % 0, a floor of NaN) or
-- beyond 2^53; the map refuses the first two with an error. L keeps the
-- compiler from folding literals: Lua 5.1 keeps one constant for 0 and
-- -0 in a function, so a folded -0 can turn another 0's sign.
local cuda = require("cuda")
local kernels = require("kernels")

local cpu = cuda.backend() == "cpu"
local programs = cpu and 400 or 40

-- the same programs on every backend and every run
local rand, pick = check.generator(12345)

local consts = { "0", "1", "2", "3", "0.5", "-1", "1e300", "1e-300", "7", "(0/0)", "(1/0)", "2.5", "100", "-4.75" }
local exact_unary, exact_binary, exact_calls2 = { "math.abs", "math.floor", "math.sqrt", "-" }, { "+", "-", "*", "/", "%" },
  { "math.max", "math.min", "math.fmod" }
local unary, binary, calls2 = { unpack(exact_unary) }, { unpack(exact_binary) }, { unpack(exact_calls2) }
if cpu then
  for _, f in ipairs({ "math.exp", "math.log", "math.sin", "math.cos", "math.tan", "math.atan", "math.log10",
    "math.sinh", "math.cosh", "math.tanh", "math.asin", "math.acos", "math.deg", "math.rad" }) do
    unary[#unary + 1] = f
  end
  binary[#binary + 1] = "^"
  calls2[#calls2 + 1] = "math.pow"
  calls2[#calls2 + 1] = "math.atan2"
end

-- gen returns an expression and whether it is an integer in a map.
local function gen(depth)
  local r = rand(10)
  if depth == 0 or r <= 3 then
    if rand(4) == 1 then
      local lit = pick(consts)
      return "L(" .. lit .. ")", lit:match("^%-?%d+$") ~= nil
    end
    return pick({ "a", "b", "c" }), false
  elseif r <= 6 then
    local op = pick(binary)
    local x, xi = gen(depth - 1)
    local y, yi = gen(depth - 1)
    if xi and yi and op ~= "/" and op ~= "^" then return "I(" .. x .. " " .. op .. " " .. y .. ")", true end
    return "(" .. x .. " " .. op .. " " .. y .. ")", false
  elseif r <= 8 then
    local f = pick(unary)
    local x, xi = gen(depth - 1)
    if f == "-" then return (xi and "I" or "") .. "(- " .. x .. ")", xi end
    if f == "math.floor" then return "I(math.floor(" .. x .. "))", true end
    return f .. "(" .. x .. ")", xi and f == "math.abs"
  elseif r == 9 then
    local f = pick(calls2)
    local x, xi = gen(depth - 1)
    local y, yi = gen(depth - 1)
    return f .. "(" .. x .. ", " .. y .. ")", xi and yi and f ~= "math.fmod" and f ~= "math.pow" and f ~= "math.atan2"
  end
  return "math.ldexp(" .. gen(depth - 1) .. ", " .. pick({ "1", "-3", "7", "1024", "-1080" }) .. ")", false
end

local I, L, skip = check.int, check.literal, check.skip

local minus_zero = -L(0)
local values = { 0, minus_zero, 1, -1, 0.5, 2, 3, 1e300, -1e300, 1e-310, 0 / 0, 1 / 0, -1 / 0, 7.25, -3.5, 100, math.pi, 1e16,
  2 ^ 53 + 2, -2 ^ 31, 1e-5 }
local n = 64
local at, bt, ct = {}, {}, {}
for i = 1, n do at[i], bt[i], ct[i] = pick(values), pick(values), pick(values) end
local A, B, C = cuda.to_device(at, "float64"), cuda.to_device(bt, "float64"), cuda.to_device(ct, "float64")
local out = cuda.zeros(n, "float64")
-- the same elements as 8 x 8 matrices, for the reductions along an axis
local A8, B8, C8 = A:reshape({ 8, 8 }), B:reshape({ 8, 8 }), C:reshape({ 8, 8 })

-- NumPy's max and min of two values: a NaN wins
local function max2(x, y) if x ~= x or y ~= y then return 0 / 0 end return x > y and x or y end
local function min2(x, y) if x ~= x or y ~= y then return 0 / 0 end return x < y and x or y end

local function same(x, y) return x == y or (x ~= x and y ~= y) end
-- elementwise, a zero's sign counts too
local wrap, saturate, same_bits = check.wrap, check.saturate, check.same_bits
local O32, O8 = cuda.zeros(n, "int32"), cuda.zeros(n, "uint8")
local compared, skipped = 0, 0
for _ = 1, programs do
  local body, isint = gen(4)
  local ref = assert(loadstring("local I, L = ... return function(a, b, c) return " .. body .. " end"))(I, L)
  body = body:gsub("[IL]%(", "(")
  local want = {}
  local ok, err = pcall(function()
    for i = 1, n do want[i] = ref(at[i], bt[i], ct[i]) end
  end)
  if not ok and err ~= skip then error("plain Lua failed on " .. body .. ": " .. tostring(err)) end
  if not ok then
    skipped = skipped + 1
  else
    local fn = assert(loadstring("return function(a, b, c) return " .. body .. " end"))()
    local mok, merr = pcall(kernels.map, fn, out, A, B, C)
    if not mok then error("kernels.map refused " .. body .. ": " .. tostring(merr)) end
    compared = compared + 1
    local got = out:to_table()
    local max, min = -math.huge, math.huge
    for i = 1, n do
      if not same_bits(got[i], want[i]) then
        error(string.format("kernels.map of %s at a=%.17g b=%.17g c=%.17g gave %.17g, plain Lua %.17g",
          body, at[i], bt[i], ct[i], got[i], want[i]))
      end
      max, min = max2(max, want[i]), min2(min, want[i])
    end
    if compared % 2 == 0 then
      -- the same map into int32 and uint8
      for _, o in ipairs({ { O32, "int32", 32, true, -2 ^ 31, 2 ^ 31 - 1 }, { O8, "uint8", 8, false, 0, 255 } }) do
        local iok, ierr = pcall(kernels.map, fn, o[1], A, B, C)
        if not iok then error("kernels.map into " .. o[2] .. " refused " .. body .. ": " .. tostring(ierr)) end
        local goti = o[1]:to_table()
        for i = 1, n do
          local w = isint and wrap(want[i], o[3], o[4]) or saturate(want[i], o[5], o[6])
          if goti[i] ~= w then
            error(string.format("kernels.map of %s into %s at a=%.17g b=%.17g c=%.17g gave %.17g, plain Lua %.17g, which converts to %.17g",
              body, o[2], at[i], bt[i], ct[i], goti[i], want[i], w))
          end
        end
      end
    end
    if compared % 4 == 1 then
      -- the same values reduced: max and min are exact in any order
      for op, w in pairs({ max = max, min = min }) do
        local r = kernels.map_reduce(fn, op, A, B, C)
        if not same(r, w) then
          error(string.format("kernels.map_reduce(%s, %q) gave %.17g, plain Lua %.17g", body, op, r, w))
        end
      end
    elseif compared % 4 == 3 then
      -- and along each axis of the 8 x 8 matrices: axis 1 down the
      -- columns (NumPy's axis=0), axis 2 along the rows
      for op, f in pairs({ max = max2, min = min2 }) do
        for axis = 1, 2 do
          local r8 = kernels.map_reduce(fn, op, A8, B8, C8, { axis = axis })
          local got8 = r8:to_table()
          r8:free()
          for j = 1, 8 do
            local w
            for r = 1, 8 do
              local v = axis == 1 and want[(r - 1) * 8 + j] or want[(j - 1) * 8 + r]
              w = w == nil and v or f(w, v)
            end
            if not same(got8[j], w) then
              error(string.format("kernels.map_reduce(%s, %q, {axis = %d}) gave %.17g at %d, plain Lua %.17g", body, op, axis, got8[j], j, w))
            end
          end
        end
      end
    end
  end
end
-- most programs are compared
check.eq(compared > programs / 2 and skipped > 0, true, compared .. " compared, " .. skipped .. " skipped")

-- Maps over float32, float16 and bfloat16 arrays, exact operations only,
-- on views that start 0 to 3 elements into their array and are 1,000
-- to 1,007 long, so that a vector's loads start misaligned and end in a
-- part of one: each backend prints a digest of what every 25 programs
-- wrote into the whole output array (its elements outside the view must
-- stay 0), which the parity test compares between the backends. A map
-- that stops (an integer % 0, a floor of NaN) counts as stopped.
rand, pick = check.generator(53)
unary, binary, calls2 = exact_unary, exact_binary, exact_calls2
for _, dt in ipairs({ "float32", "float16", "bfloat16" }) do
  local xt = {}
  for i = 1, 1010 do xt[i] = pick(values) end
  local X = cuda.to_device(xt, dt)
  local O = cuda.zeros(1010, dt)
  local h, stopped, line = 0, 0, {}
  for p = 1, 100 do
    local body = gen(3):gsub("[IL]%(", "(")
    local fn = assert(loadstring("return function(a, b, c) return " .. body .. " end"))()
    local len = 999 + rand(8)
    local function view() local o = rand(4) - 1 return X:rows(1 + o, o + len) end
    local o = rand(4) - 1
    kernels.fill(O, 0)
    local ok, err = pcall(kernels.map, fn, O:rows(1 + o, o + len), view(), view(), view())
    if ok then
      for _, v in ipairs(O:to_table()) do h = check.digest(h, v ~= v and "nan;" or string.format("%.9g;", v)) end
    elseif tostring(err):find("has no int64 value", 1, true) or tostring(err):find("integer modulo by zero", 1, true) then
      stopped = stopped + 1
      h = check.digest(h, "stopped")
    else
      error("kernels.map refused " .. body .. " over " .. dt .. ": " .. tostring(err))
    end
    if p % 25 == 0 then
      line[#line + 1] = string.format("%08x", h)
      h = 0
    end
  end
  print(string.format("maps over %s: %d of 100 stopped, %s", dt, stopped, table.concat(line, " ")))
  X:free(); O:free()
end
