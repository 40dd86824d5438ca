-- kernels.map against plain Lua on random expressions: each program is a
-- function of three float64 elements built from arithmetic, math calls and
-- constants, run by kernels.map over edge values (zeros, infinities, NaN,
-- huge and tiny numbers, integers past 2^53) and by plain Lua element by
-- element. Every element must be the same number (any NaN matches any
-- NaN), or the map must refuse the function with an error, as it does a
-- floor of a value no int64 holds. Every fourth function is also reduced
-- by kernels.map_reduce's "max" and "min", which must give NumPy's max
-- and min of plain Lua's values. The functions exact on both backends
-- run everywhere; the CPU backend, whose evaluator computes each math
-- function as Lua's math library does, also runs the transcendental ones,
-- which CUDA computes within a few ulps (docs/kernel-language.md).
--
-- Not compared: -0 (math.floor gives an int64, which has none; and
-- lua5.1 keeps one constant for 0 and -0 in a function).
local cuda = require("cuda")
local kernels = require("kernels")

local cpu = cuda.backend() == "cpu"
local programs = cpu and 400 or 40

-- a small linear congruential generator, so that the programs are the
-- same on every backend and every run
local state = 12345
local function rand(n)
  state = (state * 1103515245 + 12345) % 2147483648
  return math.floor(state / 65536) % n + 1
end
local function pick(t) return t[rand(#t)] end

local consts = { "0", "1", "2", "3", "0.5", "-1", "1e300", "1e-300", "7", "(0/0)", "(1/0)", "2.5", "100", "-4.75" }
local unary = { "math.abs", "math.floor", "math.sqrt", "-" }
local binary = { "+", "-", "*", "/", "%" }
local calls2 = { "math.max", "math.min", "math.fmod" }
if cpu then
  for _, f in ipairs({ "math.exp", "math.log", "math.sin", "math.cos", "math.tan", "math.atan", "math.log10",
    "math.sinh", "math.cosh", "math.tanh", "math.asin", "math.acos", "math.deg", "math.rad" }) do
    unary[#unary + 1] = f
  end
  binary[#binary + 1] = "^"
  calls2[#calls2 + 1] = "math.pow"
  calls2[#calls2 + 1] = "math.atan2"
end

local function gen(depth)
  local r = rand(10)
  if depth == 0 or r <= 3 then
    if rand(4) == 1 then return pick(consts) end
    return pick({ "a", "b", "c" })
  elseif r <= 6 then
    return "(" .. gen(depth - 1) .. " " .. pick(binary) .. " " .. gen(depth - 1) .. ")"
  elseif r <= 8 then
    local f = pick(unary)
    if f == "-" then return "(- " .. gen(depth - 1) .. ")" end
    return f .. "(" .. gen(depth - 1) .. ")"
  elseif r == 9 then
    return pick(calls2) .. "(" .. gen(depth - 1) .. ", " .. gen(depth - 1) .. ")"
  end
  return "math.ldexp(" .. gen(depth - 1) .. ", " .. pick({ "1", "-3", "7", "1024", "-1080" }) .. ")"
end

local values = { 0, 1, -1, 0.5, 2, 3, 1e300, -1e300, 1e-310, 0 / 0, 1 / 0, -1 / 0, 7.25, -3.5, 100, math.pi, 1e16,
  2 ^ 53 + 2, -2 ^ 31, 1e-5 }
local n = 64
local at, bt, ct = {}, {}, {}
for i = 1, n do at[i], bt[i], ct[i] = pick(values), pick(values), pick(values) end
local A, B, C = cuda.to_device(at, "float64"), cuda.to_device(bt, "float64"), cuda.to_device(ct, "float64")
local out = cuda.zeros(n, "float64")

local function same(x, y) return x == y or (x ~= x and y ~= y) end
local compared, refused = 0, 0
for _ = 1, programs do
  local body = gen(4)
  local fn = assert(loadstring("return function(a, b, c) return " .. body .. " end"))()
  local ok, err = pcall(kernels.map, fn, out, A, B, C)
  if ok then
    compared = compared + 1
    local got = out:to_table()
    local max, min = -math.huge, math.huge -- NumPy's: a NaN wins
    for i = 1, n do
      local want = fn(at[i], bt[i], ct[i])
      if not same(got[i], want) then
        error(string.format("kernels.map of %s at a=%.17g b=%.17g c=%.17g gave %.17g, plain Lua %.17g",
          body, at[i], bt[i], ct[i], got[i], want))
      end
      if want ~= want or max ~= max then max = 0 / 0 elseif want > max then max = want end
      if want ~= want or min ~= min then min = 0 / 0 elseif want < min then min = want end
    end
    if compared % 4 == 1 then
      -- the same values reduced: max and min are exact in any order
      for op, want in pairs({ max = max, min = min }) do
        local r = kernels.map_reduce(fn, op, A, B, C)
        if not same(r, want) then
          error(string.format("kernels.map_reduce(%s, %q) gave %.17g, plain Lua %.17g", body, op, r, want))
        end
      end
    end
  elseif not tostring(err):find("has no int64 value", 1, true) then
    error("kernels.map refused " .. body .. ": " .. tostring(err))
  else
    refused = refused + 1
  end
end
-- the programs reach both outcomes
check.eq(compared > programs / 2 and refused > 0, true, compared .. " compared, " .. refused .. " refused")
