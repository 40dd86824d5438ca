-- a[i] and a[i][j]: elements of 1-D arrays, rows of larger ones (views
-- sharing memory), on the device and on the host; reads and writes.
local cuda = require("cuda")

-- 1-D device arrays: an element is a number, copied to the host
local v = cuda.to_device({ 10, 20, 30 })
check.eq(v[1], 10, "v[1]")
check.eq(v[3], 30, "v[3]")
v[2] = 25
check.eq(v:to_table()[2], 25, "v[2] = 25 writes the device")
for _, dt in ipairs({ "float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8" }) do
  local x = cuda.zeros(4, dt)
  x[4] = 2.5
  local want = (dt == "int32" or dt == "int64" or dt == "uint8") and 2 or 2.5
  check.eq(x[4], want, dt .. " element written and read")
  check.eq(x:to_table()[4], want, dt .. " element as to_table sees it")
end
local u = cuda.zeros(1, "uint8")
check.error("DeviceArray[1]: 300 is out of uint8's range, 0 to 255", function() u[1] = 300 end)
check.eq(u[1], 0, "a refused element is left as it was")

-- 2-D: A[i] is a DeviceArray view of row i, A[i][j] an element
local A = cuda.to_device({ { 1, 2, 3 }, { 4, 5, 6 } })
local row = A[2]
check.eq(row.ndim, 1, "a row has one dimension fewer")
check.eq(row.shape[1], 3, "a row's length")
check.eq(tostring(row), "DeviceArray<float32>[3] 12 B\n[4., 5., 6.]", "a row prints")
check.eq(A[2][3], 6, "A[2][3]")
A[1][2] = 20
check.eq(A:to_table()[1][2], 20, "A[1][2] = 20 writes A")
row[1] = 40
check.eq(A[2][1], 40, "a row shares A's memory")
check.error("cannot free a view", function() A[1]:free() end)
require("kernels").fill(A[1], 7)
check.eq(A:to_table()[1][3], 7, "a row works as any array")

-- 3-D and more dimensions, views of views
local C = cuda.to_device({ { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } } }, "int32")
check.eq(C[2][1][2], 6, "C[2][1][2]")
C[2][2][1] = 70
check.eq(C:to_table()[2][2][1], 70, "C[2][2][1] = 70")
check.eq(A:rows(2, 2)[1][3], 6, "a row of a rows view")
local five = cuda.ones({ 1, 2, 1, 2, 3 }) -- more than four dimensions: the generic metatable
five[1][2][1][2][3] = 9
check.eq(five[1][2][1][2][3], 9, "five dimensions")
check.eq(five:reshape(-1)[12], 9, "the last element, flat")

-- the same through a table whose __index is the array, and in a coroutine
local proxy = setmetatable({}, { __index = v })
check.eq(proxy[3], 30, "an array reached through another table's __index")
local co = coroutine.wrap(function() coroutine.yield(A[2][2]) end)
check.eq(co(), 5, "indexing in a coroutine")

-- errors name the array, its shape and the index, and change nothing
check.error("DeviceArray[3]: index 4 out of range for shape 3 (indices run from 1 to 3)", function() return v[4] end)
check.error("DeviceArray[3]: index 0 out of range for shape 3 (indices run from 1 to 3)", function() v[0] = 1 end)
check.error("DeviceArray[2x3]: index 3 out of range for shape 2x3 (rows run from 1 to 2)", function() return A[3] end)
check.error("DeviceArray[3]: index 4 out of range for shape 3", function() return A[1][4] end)
check.error("DeviceArray[3]: index 1.5 is not an integer", function() return v[1.5] end)
check.error("DeviceArray[3]: index 9.007199254741e+15 out of range", function() return v[2 ^ 53] end)
check.error("DeviceArray[3]: index -inf out of range", function() return v[-1 / 0] end)
check.error("DeviceArray[3]: index must be an integer, got boolean", function() return v[true] end)
check.error("DeviceArray[3]: index must be an integer, got table", function() return v[{}] end)
check.error("DeviceArray[2x3]: [1] is a row, not an element; set an element as x[1][j] = v", function() A[1] = 5 end)
check.error("DeviceArray[3]: element must be a number, got string", function() v[1] = "x" end)
check.error("DeviceArray[0]: index 1 out of range for shape 0 (it has no indices)", function() return cuda.zeros(0)[1] end)
local gone = cuda.ones(2)
gone:free()
check.error("DeviceArray[2]: use of freed array", function() return gone[1] end)
check.error("DeviceArray[2]: use of freed array", function() gone[1] = 1 end)
check.eq(v:to_table()[1] + v:to_table()[2] + v:to_table()[3], 65, "v unchanged by the errors")
check.eq(A[2][2], 5, "A unchanged by the errors")

-- host arrays: the same, and rows share memory
local h = cuda.host_array({ 2, 3 }, "float64")
for i = 1, 2 do for j = 1, 3 do h[i][j] = i * 10 + j end end
check.eq(h[2][3], 23, "h[2][3]")
check.eq(tostring(h[1]), "HostArray<float64>[3] 24 B\n[11., 12., 13.]", "h[1] is a HostArray row")
local hrow = h[2]
hrow[1] = -1
check.eq(h[2][1], -1, "a host row shares h's memory")
check.eq(cuda.to_device(h):to_table()[2][1], -1, "and uploads as h")
local flat = h:reshape(-1)
check.eq(flat[4], -1, "flat access through a 1-D reshape")
check.error("HostArray[2x3]: index 3 out of range for shape 2x3 (rows run from 1 to 2)", function() return h[3] end)
check.error("HostArray[3]: index 0 out of range for shape 3", function() return h[1][0] end)
check.error("HostArray[2x3]: [2] is a row, not an element; set an element as x[2][j] = v", function() h[2] = 0 end)
check.error("HostArray[3]: index must be an integer, got nil", function() return h[1][nil] end)
