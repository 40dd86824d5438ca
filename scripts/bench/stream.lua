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

for _, kind in ipairs({ "pinned", "pageable" }) do
  local list = kind == "pinned" and pinned or batches(false)
  local t = B.wall_time(function()
    for i, x in batch.iter(list, { prefetch = 2 }) do end
  end, 1, 3, 1)
  B.emit({ bench = "stream", impl = "glua", device = B.device_name(), how = "batch.iter " .. kind,
    gib = total / 2 ^ 30, gbs = total / t / 1e9, fraction_of_copy_from = plain / t })
  list = nil
  collectgarbage()
end
