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
