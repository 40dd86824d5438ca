-- Operators on arrays: A + B, A - 1, 2 * A, 1 / A, -A, ... are new arrays
-- whose elements are those the in-place kernels give, bit for bit, on
-- every dtype; their operands are left alone; mistakes are errors naming
-- the expression.
local cuda = require("cuda")
local kernels = require("kernels")
local pool = require("pool")

local shape = { 6, 50 }
local dtypes = { "float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8" }

-- operand is random data with integer parts in dt, zeros in the integer
-- dtypes among them: a division by zero is an infinity, or 0 in floor
-- division, the same for the operators and the kernels.
local function operand(dt, seed)
  local u = kernels.add_scalar(kernels.scale(cuda.rand(shape, "float64", seed), 200), -100.5)
  local r = kernels.copy(cuda.device_array(shape, dt), u)
  u:free()
  return r
end

local function same(got, want, what)
  check.eq(got.dtype, want.dtype, what .. ": dtype")
  check.eq(table.concat(got.shape, "x"), table.concat(want.shape, "x"), what .. ": shape")
  local d = kernels.max_abs_diff(got, want)
  if d ~= d then
    -- a NaN somewhere (0 / 0 of integers): it must be in the same places
    local g, w = got:copy_to_host():reshape(-1), want:copy_to_host():reshape(-1)
    for k = 1, #g do
      assert(g[k] == w[k] or (g[k] ~= g[k] and w[k] ~= w[k]), what .. ": element " .. k .. " is " .. g[k] .. ", want " .. w[k])
    end
    return
  end
  check.eq(d, 0, what)
end

local kernel = { ["+"] = "add", ["-"] = "sub", ["*"] = "mul", ["/"] = "div" }
local apply = {
  ["+"] = function(x, y) return x + y end,
  ["-"] = function(x, y) return x - y end,
  ["*"] = function(x, y) return x * y end,
  ["/"] = function(x, y) return x / y end,
}

local function float64(a) return kernels.copy(cuda.device_array(a.shape, "float64"), a) end

for i, dt in ipairs(dtypes) do
  local A, B = operand(dt, i), operand(dt, 100 + i)
  local A0, B0 = A:clone(), B:clone()
  local integer = dt == "int32" or dt == "int64" or dt == "uint8"
  for sym, name in pairs(kernel) do
    local what = dt .. " A " .. sym
    -- what the operator must equal: the kernel of its name, or for / of
    -- integers, true division as NumPy's, the kernel on float64 copies
    local function want(y, x)
      if sym == "/" and integer then return kernels.div(float64(y), float64(x)) end
      return kernels[name](y:clone(), x)
    end
    local C = apply[sym](A, B)
    check.eq(type(C), "userdata", what .. " B is a DeviceArray")
    assert(C ~= A and C ~= B, what .. " B is a new array")
    same(C, want(A, B), what .. " B")
    -- a number on either side equals a full array of it, for numbers
    -- every dtype holds
    for _, v in ipairs({ 3, 2 }) do
      local V = cuda.full(shape, v, dt)
      same(apply[sym](A, v), want(A, V), what .. " " .. v)
      same(apply[sym](v, A), want(V, A), dt .. " " .. v .. " " .. sym .. " A")
      V:free()
    end
    if integer then
      -- a number that is not an integer makes a float64 array, as NumPy's
      -- promotion does
      local H = cuda.full(shape, 0.5, "float64")
      same(apply[sym](A, 0.5), kernels[name](float64(A), H), what .. " 0.5")
      same(apply[sym](0.5, A), kernels[name](H:clone(), float64(A)), dt .. " 0.5 " .. sym .. " A")
      H:free()
    end
  end
  same(-A, kernels.scale(A:clone(), -1), dt .. " -A")
  same(A, A0, dt .. " A is left alone")
  same(B, B0, dt .. " B is left alone")
  -- the host gives the device's elements
  local hA, hB = A:copy_to_host(), B:copy_to_host()
  for sym in pairs(kernel) do
    local d, h = apply[sym](A, B):copy_to_host(), apply[sym](hA, hB)
    local dn, hn = apply[sym](0.5, A):copy_to_host(), apply[sym](0.5, hA)
    check.eq(tostring(h):match("^HostArray"), "HostArray", dt .. " host " .. sym .. " gives a HostArray")
    check.eq(h.dtype, d.dtype, dt .. " host A " .. sym .. " B: dtype")
    check.eq(hn.dtype, dn.dtype, dt .. " host 0.5 " .. sym .. " A: dtype")
    d, h, dn, hn = d:reshape(-1), h:reshape(-1), dn:reshape(-1), hn:reshape(-1) -- flat: h[k] is element k
    local function equal(p, q) return p == q or (p ~= p and q ~= q) end
    for k = 1, #h do
      assert(equal(h[k], d[k]), dt .. " host A " .. sym .. " B [" .. k .. "]: " .. h[k] .. ", device " .. d[k])
      assert(equal(hn[k], dn[k]), dt .. " host 0.5 " .. sym .. " A [" .. k .. "]: " .. hn[k] .. ", device " .. dn[k])
    end
  end
  check.eq((-hA)[1][1], (-A):copy_to_host()[1][1], dt .. " -h")
  for _, a in ipairs({ A, B, A0, B0 }) do a:free() end
end

-- against plain Lua arithmetic, on numbers float32 holds
local x = cuda.to_device({ { 1, 2, 3 }, { 4, 5, 6 } })
local y = cuda.to_device({ { 2, 2, 2 }, { 4, 4, 4 } })
local want = {
  { x + y, { 3, 4, 5, 8, 9, 10 } },
  { x - y, { -1, 0, 1, 0, 1, 2 } },
  { x * y, { 2, 4, 6, 16, 20, 24 } },
  { x / y, { 0.5, 1, 1.5, 1, 1.25, 1.5 } },
  { x - 1, { 0, 1, 2, 3, 4, 5 } },
  { 1 - x, { 0, -1, -2, -3, -4, -5 } },
  { 2 * x, { 2, 4, 6, 8, 10, 12 } },
  { x / 4, { 0.25, 0.5, 0.75, 1, 1.25, 1.5 } },
  { 3 / y, { 1.5, 1.5, 1.5, 0.75, 0.75, 0.75 } },
  { -x, { -1, -2, -3, -4, -5, -6 } },
  { (x + 1) * (y - 1) / 2, { 1, 1.5, 2, 7.5, 9, 10.5 } },
}
for k, w in ipairs(want) do
  local h = w[1]:copy_to_host():reshape(-1)
  for e = 1, 6 do check.eq(h[e], w[2][e], "expression " .. k .. " element " .. e) end
end
check.eq((-cuda.zeros(1)):to_table()[1], 0, "-0 is zero")
assert(1 / (-cuda.zeros(1)):to_table()[1] < 0, "-0 keeps its sign, as NumPy's")

-- == stays identity, as Lua requires: two arrays of equal elements differ
assert(x == x, "an array equals itself")
assert(x ~= x:clone(), "a copy is another array")

-- mistakes name the expression, allocate nothing, and leave the operands
check.error("DeviceArray + DeviceArray: shapes 2x3 and 3x2 differ", function() return x + cuda.zeros({ 3, 2 }) end)
check.error("DeviceArray * DeviceArray: dtypes float32 and float64 differ", function() return x * cuda.ones({ 2, 3 }, "float64") end)
check.error("DeviceArray + string: the right operand must be a DeviceArray or a number, not string", function() return x + "1" end)
check.error("table - DeviceArray: the left operand must be a DeviceArray or a number, not table", function() return {} - x end)
check.error("DeviceArray / HostArray: one array is on the device and one on the host", function() return x / y:copy_to_host() end)
check.error("HostArray + HostArray: shapes 2x3 and 6 differ", function() return x:copy_to_host() + cuda.zeros(6):copy_to_host() end)
check.error("DeviceArray ^ number: arrays have no ^ operator", function() return x ^ 2 end)
check.error("DeviceArray % number: arrays have no % operator", function() return x % 2 end)
local freed = cuda.zeros({ 2, 3 })
freed:free()
check.error("DeviceArray - DeviceArray: right operand: use of freed array", function() return x - freed end)
check.error("-DeviceArray: operand: use of freed array", function() return -freed end)
check.eq(kernels.sum(x), 21, "x survives the errors")

-- arrays of more than four dimensions have the generic metatable, which
-- has the operators too
local g = cuda.ones({ 1, 1, 1, 2, 3 })
check.eq(kernels.sum(g + g), 12, "5-D A + A")
check.eq(kernels.sum(1 - g * 3), -12, "5-D 1 - A * 3")

-- a view's operators read the view's elements
local rows = cuda.to_device({ { 1, 2 }, { 3, 4 }, { 5, 6 } })
local r = (rows:rows(2, 3) * 10):to_table()
check.eq(r[1][1] + r[2][2], 30 + 60, "operators on a view")

-- the operators' arrays are where pool.report() says: the line with the
-- operator made them
local P = cuda.ones({ 7, 13 }, "float64")
local T = P * 2; local line = debug.getinfo(1, "l").currentline
P:free()
local found
for _, b in ipairs(pool.snapshot()) do
  if b.dtype == "float64" and b.shape[1] == 7 and b.shape[2] == 13 then found = b.site end
end
assert(found and found:find("operators.lua:" .. line, 1, true), "the product's site is the line with *: " .. tostring(found) .. ", want line " .. line)
assert(pool.report():find("operators.lua:" .. line, 1, true), "pool.report() names the line with *:\n" .. pool.report())
T:free()
