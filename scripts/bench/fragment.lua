-- Fragmentation: fill a fraction of the memory limit with float32 arrays of
-- 1, 2, 1.5, 4, 0.5, 2, 1 MiB (repeated), free every other one, and find by
-- binary search the largest single array that still fits. ratio = largest /
-- (limit - live bytes); 1 means the freed holes cost nothing. The limit is the
-- hard limit if one is set, else the device's memory. Peer: fragment.py
-- (PyTorch, PyTorch with expandable segments, CuPy).
--   glua scripts/bench/fragment.lua [fill (default: 0.25 and 0.5)] [step_mib=64]
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda, pool = require("cuda"), require("pool")

local MiB = 1024 * 1024
local pattern = { 1, 2, 1.5, 4, 0.5, 2, 1 } -- MiB
local fills = arg[1] and { tonumber(arg[1]) } or { 0.25, 0.5 }
local step = (tonumber(arg[2]) or 64) * MiB -- the search's resolution, bytes
local limit = pool.limits().hard or pool.stats().device_total

local warned = false
-- fits allocates nbytes and frees it at once; any failure counts as "does
-- not fit", and the first that is not an out-of-memory error is shown.
local function fits(nbytes)
  local ok, x = pcall(cuda.device_array, nbytes / 4)
  if ok then
    x:free()
    return true
  end
  local msg = tostring(x)
  if not warned and not (msg:find("out of [%a ]*memory") or msg:find("OUT_OF_MEMORY")) then
    io.stderr:write("fragment.lua: unexpected allocation error: ", msg, "\n")
    warned = true
  end
  return false
end

for _, fill in ipairs(fills) do
  local arrays, total = {}, 0
  while total < fill * limit do
    local nbytes = pattern[#arrays % #pattern + 1] * MiB
    arrays[#arrays + 1] = cuda.device_array(nbytes / 4)
    total = total + nbytes
  end
  local live = 0
  for i = 1, #arrays do
    if i % 2 == 0 then arrays[i]:free() else live = live + arrays[i].nbytes end
  end
  -- What the pool holds, and what the device says is in use (the driver
  -- rounds allocations to its pages, so this can be more).
  local st = pool.stats()
  local reserved, device_used = st.reserved, st.device_total - st.device_free

  local lo, hi = 0, math.floor((limit - live) / step) + 1 -- lo steps fit, hi do not
  while hi - lo > 1 do
    local mid = math.floor((lo + hi) / 2)
    if fits(mid * step) then lo = mid else hi = mid end
  end

  B.emit({ bench = "fragment", impl = "glua", device = B.device_name(), strategy = pool.strategy(),
    fill = fill, step = step, arrays = #arrays, limit = limit, live = live, reserved = reserved, device_used = device_used,
    largest = lo * step, ratio = lo * step / (limit - live) })
  for i = 1, #arrays, 2 do arrays[i]:free() end
  pool.reclaim()
end
