-- batch.find_size and batch.chunks on every backend and strategy.
local batch, cuda, pool = require("batch"), require("cuda"), require("pool")
local MiB = 2 ^ 20

-- find_size: the largest size, halving from start, that fits under the
-- hard limit; only out-of-memory errors halve; nothing is left held but
-- what fn returned.
pool.set_limit({ hard = "64MiB" })
local live = pool.stats().live_arrays
local sizes = {}
local n, kept, tag = batch.find_size(function(n)
  sizes[#sizes + 1] = n
  local x = cuda.zeros({ n, 256 * 1024 }) -- n MiB
  local y = cuda.zeros({ 16 })            -- freed when fn returns
  return x, "tag"
end, { start = 1000 })
check.eq(n, 62, "the largest size that fits in 64 MiB")
check.eq(table.concat(sizes, ","), "1000,500,250,125,62", "the sizes tried")
check.eq(tag, "tag", "what fn returned comes after the size")
check.eq(kept.shape[1], 62, "the array fn returned")
check.eq(pool.stats().live_arrays, live + 1, "only what fn returned is held")
kept:free()

-- an error other than out of memory ends the search as it is
local calls = 0
local err = check.error("boom", batch.find_size, function(n) calls = calls + 1; local a = cuda.zeros({ 1024 }); error("boom") end)
check.eq(calls, 1, "no halving on another error")
check.eq(pool.stats().live_arrays, live, "nothing held after fn's error")

-- no size fits: the error names the sizes tried and the memory
err = check.error("no size from 8 down to 4 fits", batch.find_size,
  function(n) return cuda.zeros({ n * 32, 256 * 1024 }) end, { start = 8, min = 4 })
assert(err:find("tried [8 4]", 1, true) and err:find("out of", 1, true), err)
check.eq(pool.stats().live_arrays, live, "nothing held after the search failed")

check.error("function expected", batch.find_size, 5)
check.error("option start must be a positive integer", batch.find_size, function() end, { start = 0 })
check.error("min must be from 1 to start", batch.find_size, function() end, { start = 4, min = 8 })
check.error("unknown option", batch.find_size, function() end, { stride = 2 })
local co = coroutine.create(function() batch.find_size(function(n) coroutine.yield(n) end) end)
local ok, yerr = coroutine.resume(co)
assert(not ok and tostring(yerr):find("attempt to yield across", 1, true), tostring(yerr))
pool.set_limit({ hard = false })

-- chunks: views of rows of a host array, in order, every row once, the
-- last one short
local h = cuda.host_array({ 10, 3 }, "float64")
for i = 1, 10 do for j = 1, 3 do h[i][j] = ((i - 1) * 3 + j) * 1.5 end end
local chunks = batch.chunks(h, 4)
check.eq(#chunks, 3, "chunks of 10 rows by 4")
local rows, v = 0, 0
for _, c in ipairs(chunks) do
  rows = rows + c.shape[1]
  local flat = c:reshape(-1)
  for i = 1, c.size do v = v + 1; check.eq(flat[i], v * 1.5, "element " .. v) end
end
check.eq(rows, 10, "rows covered")
check.eq(chunks[3].shape[1], 2, "the last chunk is short")
check.eq(#batch.chunks(h, 100), 1, "one chunk when rows exceed the array")
check.error("rows must be at least 1", batch.chunks, h, 0)
check.error("HostArray expected", batch.chunks, cuda.zeros({ 4 }), 2)

-- matmul: host matrices by tiles under a budget equal the in-core product
local kernels = require("kernels")
local A = cuda.rand({ 37, 53 }, "float32", 11):copy_to_host()
local B = cuda.rand({ 53, 29 }, "float32", 12):copy_to_host()
local dA, dB, dC = cuda.to_device(A), cuda.to_device(B), cuda.zeros({ 37, 29 })
kernels.matmul(dC, dA, dB)
local want = dC:copy_to_host():reshape(-1)
collectgarbage() -- the random arrays above were dropped
local live2 = pool.stats().live_arrays
for _, budget in ipairs({ "1MiB", "12KiB", 800, 20 }) do
  local C = batch.matmul(A, B, { budget = budget })
  check.eq(C.shape[1] * 100 + C.shape[2], 37 * 100 + 29, "the product's shape")
  local flat = C:reshape(-1)
  for i = 1, C.size do check.near(flat[i], want[i], 1e-5, "element " .. i .. " with budget " .. budget) end
end
local out = cuda.host_array({ 37, 29 })
check.eq(batch.matmul(A, B, { budget = 4096, out = out }), out, "out is filled and returned")
check.near(out[1][1], want[1], 1e-5, "out's first element")
check.eq(pool.stats().live_arrays, live2, "nothing held after the products")
check.error("A is 37x53 but B is 37x53; inner dimensions 53 and 37 differ", batch.matmul, A, A)
check.error("must be matrices", batch.matmul, A, cuda.host_array({ 53 }))
check.error("the smallest that works is 20 B", batch.matmul, A, B, { budget = 16 })
check.error("option budget must be a size", batch.matmul, A, B, { budget = "lots" })
check.error("option out must be a HostArray", batch.matmul, A, B, { out = dC })
check.error("out must be 37x29", batch.matmul, A, B, { out = cuda.host_array({ 2, 2 }) })
dA:free(); dB:free(); dC:free()
