-- Host/device transfers into existing arrays (copy_from, copy_to_host), from
-- pinned and from ordinary host memory. Peer: transfer.py.
--   glua scripts/bench/transfer.lua [MiB]   (default 256 on the GPU, 8 on the CPU)
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda = require("cuda")

local mib = tonumber(arg[1]) or (B.gpu and 256 or 8)
local n = mib * 1024 * 1024 / 4
local d = cuda.rand(n, "float32", 1)
for _, pinned in ipairs({ true, false }) do
  local h = cuda.host_array(n, "float32", { pinned = pinned })
  d:copy_to_host(h)
  local reps = B.gpu and 10 or 3
  local up = B.wall_time(function() d:copy_from(h) end, reps, 5)
  local down = B.wall_time(function() d:copy_to_host(h) end, reps, 5)
  local kind = pinned and "pinned" or "pageable"
  B.emit({ bench = "h2d", impl = "glua", device = B.device_name(), host = kind, mib = mib, gbs = 4 * n / up / 1e9 })
  B.emit({ bench = "d2h", impl = "glua", device = B.device_name(), host = kind, mib = mib, gbs = 4 * n / down / 1e9 })
end
