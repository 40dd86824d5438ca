-- Device and host arrays: creation, fields, transfers, views, freeing.
local cuda = require("cuda")

-- creation and fields
local a = cuda.to_device({ { 1, 2, 3 }, { 4, 5, 6 } })
check.eq(a.dtype, "float32", "default dtype")
check.eq(a.ndim, 2, "ndim")
check.eq(a.size, 6, "size")
check.eq(#a, 6, "#a")
check.eq(a.nbytes, 24, "nbytes")
check.eq(a.shape[1], 2, "shape[1]")
check.eq(a.shape[2], 3, "shape[2]")
a.shape[1] = 99 -- shape is a fresh table each time
check.eq(a.shape[1], 2, "shape is a copy")
check.eq(tostring(a), "DeviceArray<float32>[2x3] 24 B\n[[1., 2., 3.],\n [4., 5., 6.]]", "tostring")
local t = a:to_table()
check.eq(t[2][3], 6, "to_table")

-- fields and methods are the same whatever the shape: arrays of up to four
-- dimensions share per-shape metatables, larger ones and the 1025th shape
-- onwards use the generic one
local function fields(x, shape, dtype)
  local size = 1
  for _, d in ipairs(shape) do size = size * d end
  check.eq(x.ndim, #shape, "ndim of " .. #shape .. "-d")
  check.eq(x.size, size, "size")
  check.eq(#x, size, "#x")
  check.eq(x.dtype, dtype, "dtype")
  check.eq(x.nbytes, size * (dtype == "float64" and 8 or 4), "nbytes")
  for i, d in ipairs(shape) do check.eq(x.shape[i], d, "shape[" .. i .. "]") end
  x.shape[1] = 99
  check.eq(x.shape[1], shape[1], "shape is a fresh table")
  check.error("DeviceArray has no field or method 'no_such_field' (fields: shape, dtype, size, nbytes, ndim; methods: clone,",
    function() return x.no_such_field end)
  check.eq(x:is_freed(), false, "is_freed")
  check.eq(#x:clone(), size, "clone")
  x:free()
  check.eq(x:is_freed(), true, "freed")
  check.eq(x.size, size, "size after free")
end
fields(cuda.zeros({ 3 }), { 3 }, "float32")
fields(cuda.zeros({ 2, 3 }, "float64"), { 2, 3 }, "float64")
fields(cuda.zeros({ 2, 3 }), { 2, 3 }, "float32") -- same shape, other dtype
fields(cuda.zeros({ 1, 2, 3, 2 }), { 1, 2, 3, 2 }, "float32")
fields(cuda.zeros({ 1, 2, 1, 2, 3 }), { 1, 2, 1, 2, 3 }, "float32")
for n = 1, 1030 do cuda.device_array(n):free() end
fields(cuda.zeros({ 1031 }), { 1031 }, "float32")
check.eq(tostring(cuda.zeros({ 1, 2, 1, 2, 3 })):match("^[^\n]*"), "DeviceArray<float32>[1x2x1x2x3] 48 B", "tostring 5-d")

-- every dtype round-trips exactly representable values
for _, dt in ipairs({ "float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8" }) do
  local d = cuda.to_device({ 0, 1, 2, 3, 100, 7 }, dt)
  check.eq(d.dtype, dt, "dtype")
  local back = d:to_table()
  for i, v in ipairs({ 0, 1, 2, 3, 100, 7 }) do check.eq(back[i], v, dt .. " round trip") end
  local z = cuda.zeros({ 2, 2 }, dt)
  check.eq(z:to_table()[2][2], 0, dt .. " zeros")
  check.eq(cuda.ones(3, dt):to_table()[3], 1, dt .. " ones")
  check.eq(cuda.full({ 2 }, 5, dt):to_table()[2], 5, dt .. " full")
end
-- conversions at the edges round to the dtype
check.eq(cuda.to_device({ 1 / 3 }, "float16"):to_table()[1], 0.333251953125, "float16 rounding")
check.eq(cuda.to_device({ 1 / 3 }, "bfloat16"):to_table()[1], 0.333984375, "bfloat16 rounding")
check.eq(cuda.to_device({ 2.9, 255.5 }, "uint8"):to_table()[2], 255, "uint8 truncates")
check.eq(cuda.to_device({ 2.9, -2.9 }, "int32"):to_table()[2], -2, "int32 truncates")
check.error("cuda.to_device: bad argument #1 (element [3]: 300 is out of uint8's range, 0 to 255)",
  function() return cuda.to_device({ 2.9, 0, 300 }, "uint8") end)

-- host arrays
local h = cuda.host_array({ 2, 3 })
check.eq(tostring(h), "HostArray<float32>[2x3] 24 B\n[[0., 0., 0.],\n [0., 0., 0.]]", "host tostring")
check.eq(#h, 6, "#h")
check.eq(h[1][1], 0, "host arrays start zeroed")
for i = 1, 2 do for j = 1, 3 do h[i][j] = ((i - 1) * 3 + j) * 10 end end
check.eq(h[2][3], 60, "h[i][j] set/get")
local d = cuda.to_device(h)
check.eq(d:to_table()[2][1], 40, "to_device(HostArray) is row-major")
local h2 = d:copy_to_host()
check.eq(h2[2][2], 50, "copy_to_host")
local h3 = cuda.host_array({ 2, 3 })
check.eq(d:copy_to_host(h3), h3, "copy_to_host(h) returns h")
check.eq(h3[2][1], 40, "copy_to_host into a given array")
check.eq(cuda.to_device(h, "float64").dtype, "float64", "to_device converts a HostArray")
check.eq(cuda.host_array(4, "int64", { pinned = true }).pinned, true, "pinned host array")

-- copy_from uploads into existing memory, from host arrays, tables and device arrays
local dst = cuda.zeros({ 2, 3 })
dst:copy_from(h)
check.eq(dst:to_table()[1][2], 20, "copy_from(HostArray)")
dst:copy_from({ { 6, 5, 4 }, { 3, 2, 1 } })
check.eq(dst:to_table()[1][1], 6, "copy_from(table)")
dst:copy_from(a)
check.eq(dst:to_table()[2][2], 5, "copy_from(DeviceArray)")

-- views share memory
local m = cuda.to_device({ { 1, 2 }, { 3, 4 }, { 5, 6 } })
local r = m:rows(2, 3)
check.eq(tostring(r), "DeviceArray<float32>[2x2] 16 B\n[[3., 4.],\n [5., 6.]]", "rows view")
check.eq(r:to_table()[1][1], 3, "rows content")
r:copy_from({ { 30, 40 }, { 50, 60 } })
check.eq(m:to_table()[3][2], 60, "writing a view writes the base")
local flat = m:reshape({ -1 })
check.eq(flat.size, 6, "reshape -1")
check.eq(flat:to_table()[4], 40, "reshape shares memory")
check.eq(m:reshape({ 2, 3 }):to_table()[2][1], 40, "reshape 2x3")
check.eq(m:rows(1, 0).size, 0, "empty rows view")
local c = m:clone()
c:copy_from({ { 0, 0 }, { 0, 0 }, { 0, 0 } })
check.eq(m:to_table()[1][1], 1, "clone does not share memory")

-- free, is_freed, use after free
local f = cuda.device_array({ 4, 4 })
local fv = f:reshape({ 16 })
check.eq(f:is_freed(), false, "live")
f:free()
check.eq(f:is_freed(), true, "freed")
check.eq(fv:is_freed(), true, "a view of a freed array is freed")
f:free() -- a second free is harmless
check.error("use of freed array", function() return f:to_table() end)
check.error("use of freed array", function() return fv:to_table() end)
check.error("use of freed array", function() return f:clone() end)
check.error("use of freed array", function() return require("kernels").fill(f, 1) end)
check.error("cannot free a view", function() m:rows(1, 1):free() end)
check.eq(tostring(f), "DeviceArray<float32>[4x4] 64 B (freed)", "tostring of a freed array")

-- empty arrays work
local e = cuda.zeros(0)
check.eq(e.size, 0, "empty size")
check.eq(#e:to_table(), 0, "empty to_table")

-- rand: reproducible for a seed, in [0, 1)
local r1 = cuda.rand({ 1000 }, "float32", 7):to_table()
local r2 = cuda.rand({ 1000 }, "float32", 7):to_table()
local r3 = cuda.rand({ 1000 }, "float32", 8):to_table()
local same, mean = 0, 0
for i = 1, 1000 do
  assert(r1[i] >= 0 and r1[i] < 1, "rand in [0, 1)")
  check.eq(r1[i], r2[i], "same seed, same numbers")
  if r1[i] == r3[i] then same = same + 1 end
  mean = mean + r1[i] / 1000
end
assert(same < 10, "different seeds give different numbers")
check.near(mean, 0.5, 0.1, "rand mean")
local u1, u2 = cuda.rand(8):to_table(), cuda.rand(8):to_table()
assert(u1[1] ~= u2[1], "unseeded rand draws new numbers each call")

-- device info
local info = cuda.device()
assert(type(info.name) == "string" and info.total_memory > 0 and info.free_memory <= info.total_memory, "device info")
check.eq(#cuda.devices(), 1, "devices")
check.eq(cuda.backend() == "cpu" or cuda.backend() == "cuda", true, "backend name")
cuda.synchronize()

-- streams, events and the timer
local s = cuda.stream()
local e0, e1 = cuda.event(), cuda.event()
e0:record(s)
local big = cuda.rand({ 256, 256 })
e1:record(s)
s:synchronize()
e1:synchronize()
check.eq(e1:query(), true, "event done after synchronize")
assert(e1:elapsed(e0) >= 0, "elapsed time")
local secs, got = cuda.timer(function(x) return require("kernels").sum(x) end, big)
assert(type(secs) == "number" and secs >= 0, "timer returns seconds")
assert(got > 0, "timer passes results through")
check.error("never recorded", function() cuda.event():synchronize() end)
check.error("cuda.timer: bad argument #1 (function expected, got nil)", cuda.timer)

-- pinned host arrays: page-locked on the GPU, ordinary memory on the CPU;
-- either way they round-trip, and views of them work
local ph = cuda.host_array({ 64, 8 }, "float32", { pinned = true })
check.eq(ph[1][1], 0, "pinned host arrays start zeroed")
local src = cuda.rand({ 64, 8 }, "float32", 42)
src:copy_to_host(ph)
local back = cuda.to_device(ph)
check.eq(require("kernels").max_abs_diff(back, src), 0, "pinned round trip")
local prow = ph:rows(3, 4)
check.eq(prow.pinned, true, "a view of a pinned array is pinned")
check.eq(prow[1][1], ph[3][1], "pinned view shares memory")
for i = 1, 20 do cuda.host_array(1024, "float32", { pinned = true }) end -- dropped, freed by cleanups
collectgarbage()
