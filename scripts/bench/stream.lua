-- Host data streamed to the device through batch.iter with nothing in the
-- body, from pinned and from ordinary (pageable) host batches, against a
-- plain pinned upload of the same bytes in the same run.
--   glua scripts/bench/stream.lua [batch MiB] [batches]   (default 64 x 128 = 8 GiB on the GPU)
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local batch, cuda = require("batch"), require("cuda")

local mib = tonumber(arg[1]) or (B.gpu and 64 or 1)
local count = tonumber(arg[2]) or (B.gpu and 128 or 8)
local n = mib * 1024 * 1024 / 4
local total = 4 * n * count

-- the batches' data: random, made on the device and downloaded once
local d = cuda.rand(n, "float32", 7)
local function batches(pinned)
  local list = {}
  for i = 1, count do
    list[i] = cuda.host_array(n, "float32", { pinned = pinned })
    d:copy_to_host(list[i])
  end
  return list
end

-- the bus's speed for these bytes: one pinned array uploaded count times
local pinned = batches(true)
local plain = B.wall_time(function() for i = 1, count do d:copy_from(pinned[i]) end end, 1, 3, 1)
B.emit({ bench = "stream", impl = "glua", device = B.device_name(), how = "copy_from pinned", gib = total / 2 ^ 30, gbs = total / plain / 1e9 })

for _, kind in ipairs({ "pinned", "pageable", "pageable function" }) do
  local list = kind == "pinned" and pinned or batches(false)
  -- A function source may refill one array, so the iterator lets each
  -- batch be copied out before it calls the function again; a list goes
  -- on copying while the loop runs.
  local source = list
  if kind == "pageable function" then
    source = function()
      local k = 0
      return function() k = k + 1; return list[k] end
    end
  end
  local t = B.wall_time(function()
    for i, x in batch.iter(type(source) == "function" and source() or source, { prefetch = 2 }) do end
  end, 1, 3, 1)
  B.emit({ bench = "stream", impl = "glua", device = B.device_name(), how = "batch.iter " .. kind,
    gib = total / 2 ^ 30, gbs = total / t / 1e9, fraction_of_copy_from = plain / t })
  list, source = nil, nil
  collectgarbage()
end

-- The same bytes from a memory-mapped .npy already in the page cache: the
-- data set larger than host memory that batch.chunks streams.
do
  local path = os.tmpname() .. ".npy"
  local h = cuda.host_array({ count, n }, "float32")
  local row = d:reshape({ 1, n })
  for i = 1, count do row:copy_to_host(h:rows(i, i)) end
  h:save_npy(path)
  h = nil
  collectgarbage()
  local m = cuda.load_npy(path, { mmap = true })
  local t = B.wall_time(function()
    for i, x in batch.iter(batch.chunks(m, 1), { prefetch = 2 }) do end
  end, 1, 3, 1)
  B.emit({ bench = "stream", impl = "glua", device = B.device_name(), how = "batch.iter mmap npy",
    gib = total / 2 ^ 30, gbs = total / t / 1e9, fraction_of_copy_from = plain / t })
  m = nil
  collectgarbage()
  os.remove(path)
end

-- A product per batch (tf32, as many as take about as long as the batch's
-- copy): the total against the larger of copying alone and computing alone.
local side = math.floor(math.sqrt(n))
if side * side == n then
  local kernels = require("kernels")
  local W, C = cuda.rand({ side, side }), cuda.zeros({ side, side })
  local x = cuda.rand({ side, side })
  local function products(a, reps) for _ = 1, reps do kernels.matmul(C, a, W, { precision = "tf32" }) end end
  local one = B.wall_time(function() products(x, 1) end, 4, 3, 1)
  local copy = plain / count
  local reps = math.max(1, math.floor(copy / one + 0.5))
  local compute = B.wall_time(function() for i = 1, count do products(x, reps) end end, 1, 3, 1)
  local both = B.wall_time(function()
    for i, b in batch.iter(pinned, { prefetch = 2 }) do products(b:reshape({ side, side }), reps) end
  end, 1, 3, 1)
  B.emit({ bench = "stream", impl = "glua", device = B.device_name(), how = "batch.iter pinned + matmul",
    gib = total / 2 ^ 30, products_per_batch = reps, copy_s = plain, compute_s = compute, total_s = both,
    of_larger = both / math.max(plain, compute) })
end
