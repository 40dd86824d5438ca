-- Data larger than one upload, moved through the device in batches:
-- batch.iter uploads the next batch on a copy stream while the loop body
-- works on the current one, and frees each batch when the next begins.
--
--   glua scripts/batching.lua [rows per batch] [batches]
local batch, cuda, kernels, pool = require("batch"), require("cuda"), require("kernels"), require("pool")

-- CUDA.jl's CuIterator example: each batch is a pair of arrays.
local batches = { { { 1 }, { 2 } }, { { 3 }, { 4 } } }
for i, a, b in batch.iter(batches) do
  kernels.add(a, b)
  print(string.format("batch %d: a + b = {%g}", i, a:copy_to_host()[1]))
end

-- A stream of batches of unknown length (a function gives the next one),
-- with a running reduction on the device: the sum and the largest value.
local rows = math.floor(tonumber(arg[1]) or 4096)
local count = math.floor(tonumber(arg[2]) or 32)
local cols = 256
local host = cuda.host_array({ rows, cols }, "float32", { pinned = true })
local source = cuda.zeros({ rows, cols })
local made = 0
local function next_batch()
  if made == count then return nil end
  made = made + 1
  kernels.fill(source, made) -- stands in for reading the next file
  source:copy_to_host(host)
  return { host }
end

local total = 0
local largest = cuda.full({ rows, cols }, -math.huge) -- elementwise maximum so far
local t0 = os.clock()
for i, x in batch.iter(next_batch, { prefetch = 2 }) do
  total = total + kernels.sum(x)
  kernels.maximum(largest, x)
end
local seconds = os.clock() - t0
local want = rows * cols * count * (count + 1) / 2
print(string.format("%d batches of %dx%d: sum %.6g (want %.6g), largest %g, in %.3f s",
  count, rows, cols, total, want, largest:copy_to_host()[1][1], seconds))
assert(math.abs(total - want) <= 1e-6 * want, "every batch summed once")
print(string.format("arrays still held: %d (the source and the running maximum)", pool.stats().live_arrays))
