-- Integer dtypes compute in integer arithmetic, as NumPy and PyTorch do:
-- sums, differences and products wrap around modulo 2^bits, integer
-- division floors, and operators promote to float64 where NumPy's do.
-- Lua numbers are float64s: integers beyond 2^53 read back rounded.
local cuda = require("cuda")
local kernels = require("kernels")

-- the issue's examples: exact beyond 2^53, and -uint8(1) is 255
local x = cuda.to_device({ 2 ^ 53 + 2 }, "int64")
check.eq(((x + 1) - x):to_table()[1], 1, "int64 (x + 1) - x beyond 2^53")
check.eq((x + 1).dtype, "int64", "int64 + 1 stays int64")
check.eq((-cuda.to_device({ 1 }, "uint8")):to_table()[1], 255, "-uint8(1)")
local h = cuda.to_device({ 1, 0, 200 }, "uint8"):copy_to_host()
local hn = (-h):reshape(-1)
check.eq(hn[1] .. " " .. hn[2] .. " " .. hn[3], "255 0 56", "-h of uint8 on the host")

-- wrap-around on every operator, on the device and the host alike
for _, case in ipairs({
  { "int32", { 2147483647, -2147483648 }, function(a) return a + 1 end, { -2147483648, -2147483647 } },
  { "int32", { -2147483648, 5 }, function(a) return -a end, { -2147483648, -5 } },
  { "int32", { 65536, -3 }, function(a) return a * 65536 end, { 0, -196608 } },
  { "uint8", { 0, 10 }, function(a) return a - 1 end, { 255, 9 } },
  { "uint8", { 0, 10 }, function(a) return 1 - a end, { 1, 247 } },
  { "uint8", { 16, 3 }, function(a) return a * a end, { 0, 9 } },
  { "int64", { 2 ^ 62, -2 ^ 62 }, function(a) return a + a end, { -2 ^ 63, -2 ^ 63 } },
}) do
  local dt, values, f, want = case[1], case[2], case[3], case[4]
  local d, hd = f(cuda.to_device(values, dt)), f(cuda.to_device(values, dt):copy_to_host()):reshape(-1)
  check.eq(d.dtype, dt, dt .. " stays " .. dt)
  for i, w in ipairs(want) do
    check.eq(d:to_table()[i], w, dt .. " element " .. i)
    check.eq(hd[i], w, dt .. " on the host, element " .. i)
  end
end

-- a number is taken modulo 2^bits into the dtype: A - 1 == A + 255 in uint8
local u = cuda.to_device({ 3, 200 }, "uint8")
check.eq(kernels.max_abs_diff(u - 1, u + 255), 0, "uint8 A - 1 is A + 255")
check.eq((cuda.to_device({ 5 }, "int32") + 2 ^ 32):to_table()[1], 5, "2^32 is 0 in int32")

-- promotion as NumPy's: / is true division, and a number that is not an
-- integer makes a float64 array
local a = cuda.to_device({ 7, -7, 0 }, "int32")
for _, case in ipairs({
  { a / 2, { 3.5, -3.5, 0 } },
  { 1 / cuda.to_device({ 4, -8 }, "int64"), { 0.25, -0.125 } },
  { a / cuda.to_device({ 2, 4, 5 }, "int32"), { 3.5, -1.75, 0 } },
  { a * 1.5, { 10.5, -10.5, 0 } },
  { a + 0.5, { 7.5, -6.5, 0.5 } },
  { a - 0.5, { 6.5, -7.5, -0.5 } },
  { 0.5 - a, { -6.5, 7.5, 0.5 } },
}) do
  check.eq(case[1].dtype, "float64", "promoted to float64")
  for i, w in ipairs(case[2]) do check.eq(case[1]:to_table()[i], w, "promoted element " .. i) end
end
local inf = (a / 0):to_table()
assert(inf[1] == 1 / 0 and inf[2] == -1 / 0 and inf[3] ~= inf[3], "int32 / 0 is true division: inf, -inf, nan")
check.eq((a:copy_to_host() / 2).dtype, "float64", "a HostArray promotes too")
check.eq((a:copy_to_host() * 1.5):reshape(-1)[2], -10.5, "HostArray * 1.5")
check.eq((a * 2).dtype, "int32", "an integer number keeps the dtype")

-- the in-place kernels keep the dtype: they refuse a fraction and floor
-- their quotients
check.error("kernels.scale: x is int32, so factor must be an integer of magnitude below 2^63, not 1.5",
  kernels.scale, a, 1.5)
check.eq(kernels.div_scalar(a:clone(), 2):to_table()[2], -4, "kernels.div_scalar floors, as NumPy's //")
check.eq(kernels.div_scalar(a:clone(), 0):to_table()[1], 0, "kernels.div_scalar by 0 is 0, NumPy's value")

-- where float64 ends: 2^53 + 1 is held exactly in an int64 array, and
-- reads back as the nearest float64
local big = kernels.add_scalar(cuda.to_device({ 2 ^ 53, 2 ^ 53 }, "int64"), 1)
check.eq(big:to_table()[1], 2 ^ 53, "to_table rounds 2^53 + 1 to a float64")
check.eq(big[1], 2 ^ 53, "indexing rounds too")
check.eq(kernels.sum(big), 2 ^ 54 + 2, "sum is exact in int64, rounded once")
check.eq(kernels.sum(big - 2 ^ 53), 2, "the elements are exact")

-- A number written into an integer dtype truncates toward zero and must
-- then lie in the dtype's range, as NumPy and PyTorch require: beyond it,
-- NaN and the infinities are errors that name the value and the range,
-- never a saturated or wrapped element. (Arrays converted to another
-- dtype, kernels.copy, saturate: that is a conversion, not a number.)
for _, case in ipairs({
  { "uint8", 256, "256 is out of uint8's range, 0 to 255" },
  { "uint8", -1, "-1 is out of uint8's range, 0 to 255" },
  { "int32", 2 ^ 31, "2147483648 is out of int32's range, -2147483648 to 2147483647" },
  { "int32", -2 ^ 31 - 1, "-2147483649 is out of int32's range, -2147483648 to 2147483647" },
  { "int64", 2 ^ 63, "9.2233720368548e+18 is out of int64's range, -2^63 to 2^63 - 1" },
  { "int32", 0 / 0, "nan has no int32 value" },
  { "int64", -1 / 0, "-inf is out of int64's range, -2^63 to 2^63 - 1" },
}) do
  local dt, v, why = case[1], case[2], case[3]
  local d, h = cuda.zeros(2, dt), cuda.host_array(2, dt)
  check.error("cuda.full: " .. why, function() return cuda.full(2, v, dt) end)
  check.error("kernels.fill: " .. why, function() return kernels.fill(d, v) end)
  check.error("cuda.to_device: bad argument #1 (element [2]: " .. why .. ")",
    function() return cuda.to_device({ 1, v }, dt) end)
  check.error("DeviceArray[2]: " .. why, function() d[2] = v end)
  check.error("HostArray[2]: " .. why, function() h[2] = v end)
  check.eq(d:to_table()[2] + h[2], 0, dt .. ": a refused number leaves the arrays as they were")
end
-- the edges themselves, and fractions that truncate into the range
check.eq(cuda.full(1, 255.9, "uint8")[1], 255, "255.9 truncates to 255")
check.eq(cuda.full(1, -0.9, "uint8")[1], 0, "-0.9 truncates to 0")
check.eq(cuda.to_device({ -2 ^ 31, 2 ^ 31 - 1 }, "int32"):to_table()[1], -2 ^ 31, "int32's edges")
check.eq(cuda.to_device({ -2 ^ 63 }, "int64")[1], -2 ^ 63, "int64's lowest")
-- an array converted across dtypes saturates, as kernels.copy does
local wide = cuda.to_device({ 300, -5, 0 / 0 }, "float32")
check.eq(table.concat(cuda.to_device(wide:copy_to_host(), "uint8"):to_table(), " "), "255 0 0",
  "a HostArray converted to uint8 saturates")
local narrow = cuda.zeros(3, "uint8")
kernels.copy(narrow, wide)
check.eq(table.concat(narrow:to_table(), " "), "255 0 0", "kernels.copy into uint8 saturates")
-- a float dtype takes any number: beyond float16's range it is inf
check.eq(cuda.full(1, 1e6, "float16")[1], 1 / 0, "1e6 in float16 is inf")
