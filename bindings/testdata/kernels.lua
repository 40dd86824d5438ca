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
  local hx, hy = x:copy_to_host(), y:copy_to_host()

  -- axpy: y = a*x + y
  local z = y:clone()
  check.eq(kernels.axpy(z, 2.5, x), z, "kernels return their first argument")
  local hz = z:copy_to_host()
  for i = 1, n do check.near(hz[i], 2.5 * hx[i] + hy[i], 4 * tol, dt .. " axpy") end

  -- add, mul, scale
  local s = y:clone()
  kernels.add(s, x)
  local p = y:clone()
  kernels.mul(p, x)
  local c = x:clone()
  kernels.scale(c, -3)
  local hs, hp, hc = s:copy_to_host(), p:copy_to_host(), c:copy_to_host()
  for i = 1, n do
    check.near(hs[i], hx[i] + hy[i], 2 * tol, dt .. " add")
    check.near(hp[i], hx[i] * hy[i], 2 * tol, dt .. " mul")
    check.near(hc[i], -3 * hx[i], 2 * tol, dt .. " scale")
  end

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

-- integer dtypes: elementwise kernels compute in float64 and truncate
local iy = cuda.to_device({ 1, 2, 3, 250 }, "uint8")
kernels.axpy(iy, 2, cuda.to_device({ 1, 1, 1, 10 }, "uint8"))
local t = iy:to_table()
check.eq(t[1], 3, "uint8 axpy")
check.eq(t[4], 255, "uint8 axpy saturates")
local i32 = cuda.to_device({ 7, -7 }, "int32")
kernels.scale(i32, 0.5)
check.eq(i32:to_table()[1], 3, "int32 scale truncates")
check.eq(i32:to_table()[2], -3, "int32 scale truncates toward zero")
check.eq(kernels.sum(cuda.to_device({ 1, 2, 3 }, "int64")), 6, "int64 sum")

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
