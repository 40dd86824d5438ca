-- Data pasted into a script as a literal reaches the device whole: Lua
-- 5.1's table constructors, not gopher-lua's, which lost every item after
-- the 25,550th.
local cuda = require("cuda")
local kernels = require("kernels")

-- A script holding 40,000 numbers and, nested, a matrix of 30,000 rows,
-- written out as source and loaded the way glua loads a file.
local n, rows = 40000, 30000
local seed = 12345
local function draw() -- deterministic, not zero
  seed = (seed * 1103515245 + 12345) % 2147483648
  return (seed % 1000) / 250 - 2 + 0.125
end
local values, want_sum, last = {}, 0, nil
for i = 1, n do
  local v = draw()
  values[i] = string.format("%.3f", v)
  want_sum = want_sum + tonumber(values[i])
end
last = tonumber(values[n])
local matrix, col_sum = {}, 0
for i = 1, rows do
  local a, b = draw(), draw()
  matrix[i] = string.format("{%.3f, %.3f}", a, b)
  col_sum = col_sum + tonumber(string.format("%.3f", b))
end
local src = "return {" .. table.concat(values, ",") .. "}, {meta = 'm', data = {" ..
  table.concat(matrix, ",\n") .. "}}"
local list, nested = assert(loadstring(src, "literal"))()

check.eq(#list, n, "#list")
check.eq(list[n], last, "last item")
check.eq(#nested.data, rows, "rows of the nested literal")
check.eq(nested.meta, "m", "the parent keeps its other fields")

local x = cuda.to_device(list, "float64")
check.eq(x.size, n, "size on the device")
check.near(kernels.sum(x), want_sum, 1e-9, "sum on the device")
check.eq(x:copy_to_host()[n], last, "last item on the device")

local m = cuda.to_device(nested.data, "float64")
check.eq(m.shape[1], rows, "rows on the device")
check.eq(m.shape[2], 2, "columns on the device")
local h = m:copy_to_host()
local got = 0
for i = 1, rows do got = got + h[i][2] end
check.near(got, col_sum, 1e-9, "second column")
