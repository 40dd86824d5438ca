-- batch.iter on every backend and strategy: CUDA.jl's CuIterator.
local batch, cuda, kernels, pool = require("batch"), require("cuda"), require("kernels"), require("pool")
local live = pool.stats().live_arrays

-- CUDA.jl's example: each batch's arrays arrive on the device, in order
local sums = {}
for i, a, b in batch.iter({ { { 1 }, { 2 } }, { { 3 }, { 4 } } }) do
  kernels.add(a, b)
  sums[i] = a:copy_to_host()[1]
end
check.eq(table.concat(sums, " "), "3 7", "a + b of each batch")
check.eq(pool.stats().live_arrays, live, "nothing held after the last batch")

-- host arrays (pinned or not), every batch once and in order, with its
-- data; a batch's arrays freed when the next begins
for _, prefetch in ipairs({ 0, 1, 3 }) do
  local hosts = {}
  for i = 1, 9 do
    local h = cuda.host_array({ 64, 3 }, "float64", { pinned = i % 2 == 0 })
    local flat = h:reshape(-1)
    for k = 1, h.size do flat[k] = i * 1000 + k end
    hosts[i] = { h, cuda.host_array({ 2 }, "int32") }
  end
  local seen = 0
  for i, x, y in batch.iter(hosts, { prefetch = prefetch }) do
    seen = seen + 1
    check.eq(i, seen, "batch index")
    check.eq(x.dtype, "float64", "dtype")
    check.eq(y.shape[1], 2, "second array's shape")
    check.eq(kernels.sum(x), 192 * i * 1000 + 192 * 193 / 2, "batch " .. i .. "'s data")
    assert(pool.stats().live_arrays <= live + 2 * (prefetch + 1), "the current and prefetched batches only")
  end
  check.eq(seen, 9, "batches seen with prefetch " .. prefetch)
  check.eq(pool.stats().live_arrays, live, "nothing held after the loop")
end

-- a stream of unknown length: a function returning the next batch; a
-- HostArray alone is a batch of one, as batch.chunks gives them
local h = cuda.host_array({ 10, 4 })
for k = 1, h.size do h:reshape(-1)[k] = k end
local chunks, n = batch.chunks(h, 3), 0
local total = 0
for i, c in batch.iter(function() n = n + 1; return chunks[n] end) do total = total + kernels.sum(c) end
check.eq(total, 40 * 41 / 2, "every chunk summed once")

-- a function may fill one HostArray anew for every batch, as a reader of
-- a file does: each batch arrives as the function returned it
local big = 1024 * 1024 + 3 -- over 4 MiB of float32: staged in pieces
local buf, calls = cuda.host_array(big), 0
for i, d in batch.iter(function()
  calls = calls + 1
  if calls > 5 then return nil end
  cuda.full(big, calls * 7):copy_to_host(buf)
  return buf
end, { prefetch = 2 }) do
  check.eq(kernels.sum(d), big * i * 7, "batch " .. i .. " as the function returned it")
end

-- break and errors: the iterator is freed by close(), or at the next walk
-- of the Lua state once nothing refers to it (collectgarbage walks). The
-- arrays dropped above (cuda.full's) go at a walk too, whose time depends
-- on the collector: one walk first, so that what close() frees is counted
-- alone.
collectgarbage()
check.eq(pool.stats().live_arrays, live, "the dropped arrays after a walk")
local it = batch.iter({ { { 1 } }, { { 2 } }, { { 3 } } }, { prefetch = 2 })
for i in it do break end
it:close()
check.eq(pool.stats().live_arrays, live, "close() after break")
local function broken() for i in batch.iter({ { { 1 } }, { { 2 } }, { { 3 } } }) do break end end
broken()
collectgarbage()
check.eq(pool.stats().live_arrays, live, "a broken-out iterator after a walk")
check.error("body fails", function() for i in batch.iter({ { { 1 } }, { { 2 } } }) do error("body fails") end end)
collectgarbage()
check.eq(pool.stats().live_arrays, live, "an iterator whose body failed, after a walk")

-- bad input: each a clear error naming the batch, nothing held
check.error("a list of batches or a function", batch.iter, 5)
check.error("option prefetch must be a non-negative integer", batch.iter, {}, { prefetch = -1 })
check.error("unknown option", batch.iter, {}, { depth = 2 })
local function drain(b) for i in batch.iter(b) do end end
check.error("batch 2: array 1: HostArray or table of numbers expected, got string", drain, { { { 1 } }, { "x" } })
check.error("batch 2: array 1:", drain, { { { 1 } }, { { { 1, 2 }, { 3 } } } })
check.error("batch 1: a batch is a HostArray or a list of arrays, got number", drain, { 7 })
local calls = 0
check.error("batch 3: the batch function failed", drain, function() calls = calls + 1; if calls == 3 then error("no more") end; return { { calls } } end)
pool.reclaim() -- the stream-ordered pool keeps freed memory reserved
pool.set_limit({ hard = "64MiB" })
check.error("batch 2 (128 MiB in 1 array)", drain, { { { 1 } }, { cuda.host_array({ 1024, 1024, 32 }) } })
pool.set_limit({ hard = false })
local co = coroutine.create(function() drain(function() coroutine.yield() end) end)
local ok, err = coroutine.resume(co)
assert(not ok and tostring(err):find("attempt to yield across", 1, true), tostring(err))
collectgarbage()
check.eq(pool.stats().live_arrays, live, "nothing held after the bad input")
check.error("option progress must be a boolean", batch.iter, {}, { progress = 1 })
for i in batch.iter({ { { 1 } } }, { progress = false }) do end
