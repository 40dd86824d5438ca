-- Fill about 90% of the device with arrays of mixed sizes under a hard
-- limit, run into the limit, recover, and give every byte back.
local cuda = require("cuda")
local kernels = require("kernels")
local pool = require("pool")

local MiB = 1024 * 1024
local total = cuda.device().total_memory
pool.set_limit({ hard = "90%" })
local hard = pool.limits().hard
local sizes = { 64, 256, 96, 512, 32, 128, 384 } -- MiB, scaled to the device below
local scale = math.max(1, math.floor(total / (80 * 1024 * MiB) * 8)) / 8
local live, held, i = {}, 0, 0
while true do
  i = i + 1
  local mib = math.max(1, math.floor(sizes[(i - 1) % #sizes + 1] * scale))
  local ok, a = pcall(cuda.device_array, mib * MiB / 4)
  if not ok then
    -- the same words on both backends but for what ran out
    assert(tostring(a):find("memory: tried to allocate", 1, true), tostring(a))
    assert(tostring(a):find(cuda.backend() == "cuda" and "out of GPU memory" or "out of CPU backend memory", 1, true), tostring(a))
    assert(tostring(a):find("hard limit", 1, true), tostring(a))
    break
  end
  live[#live + 1] = a
  held = held + mib * MiB
  assert(i < 100000, "the hard limit never stopped the loop")
end
assert(held <= hard and held > 0.8 * hard, string.format("held %d of a %d limit", held, hard))
assert(pool.stats().reserved <= hard, "reserved stays within the hard limit")
-- live arrays are intact: mark one (fill allocates nothing), check it later
kernels.fill(live[2], 3)
-- free every other array and allocate again: the ladder recovers the space
for j = 1, #live, 2 do live[j]:free() end
check.eq(kernels.sum(live[2]), 3 * live[2].size, "live array intact after OOM")
local again = cuda.device_array(64 * MiB / 4)
check.eq(again.size, 64 * MiB / 4, "allocation after recovery")
again:free()
for j = 2, #live, 2 do live[j]:free() end
live = nil
collectgarbage()
pool.reclaim()
local s = pool.stats()
pool.set_limit({ hard = false })
assert(s.reserved <= 8 * MiB, "every byte returned after reclaim, reserved " .. s.reserved)
