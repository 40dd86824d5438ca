-- tostring of arrays: the header, then the elements as NumPy's repr writes
-- them with four decimals; a large array summarised by its corners, which
-- must be the array's own elements, read from the right places.
local cuda = require("cuda")

local function lines(s)
  local out = {}
  for line in (s .. "\n"):gmatch("([^\n]*)\n") do out[#out + 1] = line end
  return out
end

-- small arrays: every element, one width, brackets nested by dimension
check.eq(tostring(cuda.to_device({ { 1, 2 }, { 3, 4 } })), "DeviceArray<float32>[2x2] 16 B\n[[1., 2.],\n [3., 4.]]", "2-D")
check.eq(tostring(cuda.to_device({ 1, 2.5, -3 })), "DeviceArray<float32>[3] 12 B\n[ 1.0,  2.5, -3.0]", "1-D, one number of decimals")
check.eq(tostring(cuda.to_device({ { { 1, 2 } }, { { 3, 40 } } }, "int32")),
  "DeviceArray<int32>[2x1x2] 16 B\n[[[ 1,  2]],\n\n [[ 3, 40]]]", "3-D, a blank line between blocks")
check.eq(tostring(cuda.to_device({ 1 / 3, 2 / 3 }, "float64")), "DeviceArray<float64>[2] 16 B\n[0.3333, 0.6667]", "four decimals")
check.eq(tostring(cuda.to_device({ 1e-5, 1e5 })), "DeviceArray<float32>[2] 8 B\n[1.e-05, 1.e+05]", "scientific")
for dt, want in pairs({ float16 = "[0.5000, 0.3333, 2.0000]", bfloat16 = "[0.500, 0.334, 2.000]",
  int32 = "[0, 0, 2]", int64 = "[0, 0, 2]", uint8 = "[0, 0, 2]", float64 = "[0.5000, 0.3333, 2.0000]" }) do
  check.eq(lines(tostring(cuda.to_device({ 0.5, 1 / 3, 2 }, dt)))[2], want, dt)
end

-- infinities and NaNs are written as Lua 5.1 writes them
local inf = lines(tostring(cuda.to_device({ 1 / 0, -1 / 0, 0 / 0, 1 })))[2]
assert(inf:find("^%[ *inf, *%-inf, *%-?nan, *1%.%]$"), inf)

-- empty and freed arrays
check.eq(tostring(cuda.zeros({ 2, 0 })), "DeviceArray<float32>[2x0] 0 B\n[]", "empty")
local f = cuda.ones(3)
f:free()
check.eq(tostring(f), "DeviceArray<float32>[3] 12 B (freed)", "freed: the header alone")

-- a large array: six rows of six elements, with "..." between; the values
-- shown are the array's corners
local n, m = 2000, 300
local A = cuda.rand({ n, m }, "float64", 11)
local text = lines(tostring(A))
check.eq(#text, 8, "header, three rows, ..., three rows")
check.eq(text[5], " ...,", "the rows left out")
local function row_shown(i) -- the numbers the text shows for row i of A
  local line = text[i <= 3 and i + 1 or i - n + 8]
  local out = {}
  for num in line:gmatch("%d+%.%d+") do out[#out + 1] = tonumber(num) end
  return out
end
for _, i in ipairs({ 1, 2, 3, n - 2, n - 1, n }) do
  local shown, row = row_shown(i), A:rows(i, i):to_table()[1]
  check.eq(#shown, 6, "row " .. i .. " shows six elements")
  for k, j in ipairs({ 1, 2, 3, m - 2, m - 1, m }) do
    check.near(shown[k], row[j], 1e-4, string.format("A[%d][%d] as printed", i, j))
  end
end

-- a long vector and a large 3-D array are cut in every long dimension
check.eq(#lines(tostring(cuda.rand(1000000, "float32", 1))), 2, "a vector on one line")
assert(lines(tostring(cuda.rand(1000000, "float32", 1)))[2]:find("^%[[%d.]+, [%d.]+, [%d.]+, %.%.%., [%d.]+, [%d.]+, [%d.]+%]$"))
local cube = lines(tostring(cuda.rand({ 10, 20, 8 }, "float32", 2)))
local cut = 0
for _, line in ipairs(cube) do if line:find("^ +%.%.%.,$") then cut = cut + 1 end end
check.eq(cut, 1 + 6, "one cut between blocks, one in each block shown")

-- host arrays print the same way
local h = cuda.host_array({ 2, 2 }, "int32")
check.eq(tostring(h), "HostArray<int32>[2x2] 16 B\n[[0, 0],\n [0, 0]]", "host array")
check.eq(lines(tostring(A:copy_to_host()))[2], text[2], "a host copy prints as the device array")
