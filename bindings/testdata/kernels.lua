-- The in-place kernels against plain Lua arithmetic, on fresh random data,
-- for every dtype they support.
local cuda = require("cuda")
local kernels = require("kernels")

local floats = { "float32", "float64", "float16", "bfloat16" }
local n = 1000

for seed, dt in ipairs(floats) do
  local tol = tolerance[dt]
  local x = cuda.rand({ 10, 100 }, dt, seed)
  local y = cuda.rand({ 10, 100 }, dt, seed + 100)
  -- the host copies are read flat: h[i] of a 2-D array is its row i
  local hx, hy = x:copy_to_host():reshape(-1), y:copy_to_host():reshape(-1)

  -- axpy: y = a*x + y
  local z = y:clone()
  check.eq(kernels.axpy(z, 2.5, x), z, "kernels return their first argument")
  local hz = z:copy_to_host():reshape(-1)
  for i = 1, n do check.near(hz[i], 2.5 * hx[i] + hy[i], 4 * tol, dt .. " axpy") end

  -- add, mul, scale
  local s = y:clone()
  kernels.add(s, x)
  local p = y:clone()
  kernels.mul(p, x)
  local c = x:clone()
  kernels.scale(c, -3)
  local hs, hp, hc = s:copy_to_host():reshape(-1), p:copy_to_host():reshape(-1), c:copy_to_host():reshape(-1)
  for i = 1, n do
    check.near(hs[i], hx[i] + hy[i], 2 * tol, dt .. " add")
    check.near(hp[i], hx[i] * hy[i], 2 * tol, dt .. " mul")
    check.near(hc[i], -3 * hx[i], 2 * tol, dt .. " scale")
  end

  -- sub, div (by x + 0.5, never 0), maximum, minimum
  local d = kernels.sub(y:clone(), x)
  local den = kernels.add(cuda.full({ 10, 100 }, 0.5, dt), x)
  local q = kernels.div(y:clone(), den)
  local hi, lo = kernels.maximum(y:clone(), x), kernels.minimum(y:clone(), x)
  local hd, hden, hq = d:copy_to_host():reshape(-1), den:copy_to_host():reshape(-1), q:copy_to_host():reshape(-1)
  local hhi, hlo = hi:copy_to_host():reshape(-1), lo:copy_to_host():reshape(-1)
  for i = 1, n do
    check.near(hd[i], hy[i] - hx[i], 2 * tol, dt .. " sub")
    check.near(hq[i], hy[i] / hden[i], 2 * tol, dt .. " div")
    check.eq(hhi[i], math.max(hy[i], hx[i]), dt .. " maximum")
    check.eq(hlo[i], math.min(hy[i], hx[i]), dt .. " minimum")
  end

  -- maximum and minimum propagate NaN from either side
  local withnan = cuda.to_device({ 0 / 0, 1, 2 }, dt)
  local other = cuda.to_device({ 1, 0 / 0, 1 }, dt)
  for name, want in pairs({ maximum = 2, minimum = 1 }) do
    local r = kernels[name](withnan:clone(), other):to_table()
    assert(r[1] ~= r[1] and r[2] ~= r[2], dt .. " " .. name .. " propagates NaN")
    check.eq(r[3], want, dt .. " " .. name .. " without NaN")
  end
  for _, a in ipairs({ d, den, q, hi, lo, withnan, other }) do a:free() end

  -- reductions
  local sum, sq = 0, 0
  for i = 1, n do sum, sq = sum + hx[i], sq + hx[i] * hx[i] end
  check.near(kernels.sum(x), sum, 1e-6, dt .. " sum")
  check.near(kernels.norm(x), math.sqrt(sq), 1e-6, dt .. " norm")
  local maxd = 0
  for i = 1, n do maxd = math.max(maxd, math.abs(hx[i] - hy[i])) end
  check.near(kernels.max_abs_diff(x, y), maxd, 1e-6, dt .. " max_abs_diff")
  check.eq(kernels.max_abs_diff(x, x), 0, dt .. " max_abs_diff of itself")

  -- fill
  kernels.fill(c, 0.75)
  check.eq(kernels.sum(c), 0.75 * n, dt .. " fill")

  -- copy with conversion, to and from every other dtype
  for _, other in ipairs({ "float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8" }) do
    local to = cuda.zeros({ 10, 100 }, other)
    kernels.copy(to, x)
    local back = cuda.zeros({ 10, 100 }, dt)
    kernels.copy(back, to)
    if other == dt or other == "float64" or (other == "float32" and dt ~= "float64") then
      check.eq(kernels.max_abs_diff(back, x), 0, dt .. " -> " .. other .. " -> " .. dt)
    elseif other == "int32" or other == "int64" or other == "uint8" then
      check.eq(kernels.sum(to), 0, dt .. " values in [0,1) truncate to 0 in " .. other)
    else
      assert(kernels.max_abs_diff(back, x) < 1e-2, dt .. " -> " .. other .. " round trip")
    end
    to:free()
    back:free()
  end
  for _, a in ipairs({ x, y, z, s, p, c }) do a:free() end
end

-- integer dtypes compute in integers and wrap around, as NumPy's and
-- PyTorch's do; a number is taken modulo 2^bits into the dtype
local iy = cuda.to_device({ 1, 2, 3, 250 }, "uint8")
kernels.axpy(iy, 2, cuda.to_device({ 1, 1, 1, 10 }, "uint8"))
local t = iy:to_table()
check.eq(t[1], 3, "uint8 axpy")
check.eq(t[4], 14, "uint8 axpy wraps: 270 - 256")
check.eq(kernels.add_scalar(cuda.to_device({ 0, 5 }, "uint8"), -1):to_table()[1], 255, "uint8 - 1 wraps to 255")
check.eq(kernels.scale(cuda.to_device({ 1 }, "uint8"), -1):to_table()[1], 255, "uint8 times -1 is 255")
check.eq(kernels.scale(cuda.to_device({ 5 }, "int32"), 2 ^ 32 + 3):to_table()[1], 15, "a number wraps into int32")
local i32 = cuda.to_device({ 2147483647, -2147483648 }, "int32")
kernels.add(i32, cuda.to_device({ 1, -1 }, "int32"))
check.eq(i32:to_table()[1], -2147483648, "int32 add wraps past the largest")
check.eq(i32:to_table()[2], 2147483647, "int32 add wraps past the smallest")
check.eq(kernels.sum(cuda.to_device({ 1, 2, 3 }, "int64")), 6, "int64 sum")
check.eq(kernels.sum(cuda.to_device({ 2 ^ 62, 2 ^ 62, 2 ^ 62 }, "int64")), -2 ^ 62, "int64 sum wraps as NumPy's")
check.eq(kernels.sum(cuda.full(100000, 255, "uint8")), 25500000, "uint8 sum is exact")
check.eq(kernels.max_abs_diff(cuda.to_device({ -2 ^ 63 }, "int64"), cuda.to_device({ 2 ^ 63 - 2048 }, "int64")), 2 ^ 64 - 2048,
  "int64 max_abs_diff reaches 2^64")
-- 2^53 + 1 has no float64: the difference is taken exactly, then rounded
local big = kernels.add_scalar(cuda.to_device({ 2 ^ 53 }, "int64"), 1)
check.eq(kernels.max_abs_diff(big, cuda.to_device({ 1 }, "int64")), 2 ^ 53, "int64 max_abs_diff is exact")
check.eq(kernels.sum(kernels.add_scalar(big:clone(), -2 ^ 53)), 1, "int64 sum is exact beyond 2^53")

-- a number an integer array cannot take is an error naming the call, the
-- number and the dtype, and leaves the array alone
local ix = cuda.to_device({ 7, -7 }, "int32")
check.error("kernels.scale: x is int32, so factor must be an integer of magnitude below 2^63, not 0.5", kernels.scale, ix, 0.5)
check.error("kernels.axpy: y is int32, so a must be an integer of magnitude below 2^63, not 1.5", kernels.axpy, ix, 1.5, ix:clone())
local err = check.error("kernels.add_scalar: x is uint8, so a must be an integer of magnitude below 2^63, not ",
  kernels.add_scalar, cuda.zeros(2, "uint8"), 0 / 0)
assert(err:find("nan$"), "a NaN is named as tostring names it: " .. err)
check.error("kernels.div_scalar: x is int64, so a must be an integer of magnitude below 2^63, not inf",
  kernels.div_scalar, cuda.zeros(2, "int64"), 1 / 0)
check.error("not 9.2233720368548e+18", kernels.rsub, cuda.zeros(2, "int64"), 2 ^ 63)
check.eq(ix:to_table()[2], -7, "a refused number leaves the array")

-- integer division is NumPy's floor division (//); by zero it gives 0,
-- NumPy's value, and the smallest value over -1 wraps to itself
local q = cuda.to_device({ 7, -7, 7, 0, 5, -5, -2147483648 }, "int32")
kernels.div(q, cuda.to_device({ 2, 2, -2, 0, 0, 0, -1 }, "int32"))
local tq = q:to_table()
for i, want in ipairs({ 3, -4, -4, 0, 0, 0, -2147483648 }) do
  check.eq(tq[i], want, "int32 div element " .. i)
end
check.eq(kernels.div_scalar(cuda.to_device({ -7 }, "int64"), 2):to_table()[1], -4, "int64 div_scalar floors")
check.eq(kernels.rdiv(cuda.to_device({ 2, 0 }, "int32"), -7):to_table()[1], -4, "int32 rdiv floors")
local u = cuda.to_device({ 7, 200, 3 }, "uint8")
kernels.div(u, cuda.to_device({ 2, 0, 1 }, "uint8"))
kernels.sub(u, cuda.to_device({ 1, 100, 5 }, "uint8"))
local tu = u:to_table()
check.eq(tu[1], 2, "uint8 div then sub")
check.eq(tu[2], 156, "uint8 division by zero is 0, then 0 - 100 wraps")
check.eq(tu[3], 254, "uint8 sub wraps below 0")
local m64 = kernels.maximum(cuda.to_device({ -5, 9 }, "int64"), cuda.to_device({ 3, 4 }, "int64"))
check.eq(m64:to_table()[1], 3, "int64 maximum")
check.eq(kernels.minimum(m64, cuda.to_device({ 0, 0 }, "int64")):to_table()[2], 0, "int64 minimum")

-- NaN is never hidden by a reduction
local nan = cuda.to_device({ 1, 0 / 0, 3 })
local v = kernels.max_abs_diff(nan, cuda.to_device({ 1, 2, 3 }))
assert(v ~= v, "max_abs_diff propagates NaN")
v = kernels.sum(nan)
assert(v ~= v, "sum propagates NaN")

-- views work as kernel arguments and touch only their rows
local m = cuda.ones({ 4, 3 })
kernels.scale(m:rows(2, 3), 5)
check.eq(kernels.sum(m), 3 + 15 + 15 + 3, "kernel on a rows view")
