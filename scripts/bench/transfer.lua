-- Host/device transfers into existing arrays (copy_from, copy_to_host), from
-- pinned and from ordinary host memory, and downloads into a new host array
-- (copy_to_host() with no destination, the array dropped each time) beside
-- the pageable download into an existing one of the same run: the d2h_new
-- line's of_existing is their ratio, whose target is 0.9 or more, and its
-- first_gbs the first such download of the size, into memory not used
-- before. Peer: transfer.py.
-- The floor of first_gbs is the host's rate of faulting in and zeroing
-- fresh pages: pagefault.c measures it.
--   glua scripts/bench/transfer.lua [MiB ...]   (default 256 and 1024 on the GPU, 8 on the CPU)
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda = require("cuda")

local sizes = {}
for i = 1, #arg do sizes[i] = tonumber(arg[i]) end
if #sizes == 0 then sizes = B.gpu and { 256, 1024 } or { 8 } end
local reps = B.gpu and 10 or 3
for _, mib in ipairs(sizes) do
  local n = mib * 1024 * 1024 / 4
  local d = cuda.rand(n, "float32", 1)
  local existing
  for _, pinned in ipairs({ true, false }) do
    local h = cuda.host_array(n, "float32", { pinned = pinned })
    d:copy_to_host(h)
    local up = B.wall_time(function() d:copy_from(h) end, reps, 5)
    local down = B.wall_time(function() d:copy_to_host(h) end, reps, 5)
    local kind = pinned and "pinned" or "pageable"
    B.emit({ bench = "h2d", impl = "glua", device = B.device_name(), host = kind, mib = mib, gbs = 4 * n / up / 1e9 })
    B.emit({ bench = "d2h", impl = "glua", device = B.device_name(), host = kind, mib = mib, gbs = 4 * n / down / 1e9 })
    if not pinned then existing = 4 * n / down / 1e9 end
  end
  -- the first new array of a size has memory of its own, which the kernel
  -- backs with pages during the copy; later ones reuse what dropped ones held
  cuda.synchronize()
  local t0 = os.clock()
  d:copy_to_host()
  cuda.synchronize()
  local first = 4 * n / (os.clock() - t0) / 1e9
  local new = 4 * n / B.wall_time(function() d:copy_to_host() end, reps, 5) / 1e9
  B.emit({ bench = "d2h_new", impl = "glua", device = B.device_name(), host = "new", mib = mib, gbs = new,
    existing_gbs = existing, of_existing = new / existing, first_gbs = first })
  d:free()
end
