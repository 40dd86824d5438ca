-- Arrays a loop drops instead of freeing: with no limit set, how high the
-- pool peaks and what the loop costs against the same loop with t:free().
-- PyTorch and CuPy free a dropped tensor at once (reference counts); glua's
-- arrays are found by Go's collector, which glua paces by device memory.
--   glua scripts/bench/dropped.lua [iterations]
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda, pool = require("cuda"), require("pool")

local n = tonumber(arg[1]) or 1000
local samples = 5

-- The loops are written out, not passed as functions, as a script would
-- write them; os.clock is glua's wall clock.
local freed, dropped = {}, {}
for s = 1, samples do
  cuda.synchronize()
  local t0 = os.clock()
  for i = 1, n do
    local t = cuda.rand({ 512, 512 })
    t:free()
  end
  cuda.synchronize()
  freed[s] = (os.clock() - t0) / n
end
local peak_free = pool.stats().peak_used
for s = 1, samples do
  cuda.synchronize()
  local t0 = os.clock()
  for i = 1, n do
    local t = cuda.rand({ 512, 512 })
  end
  cuda.synchronize()
  dropped[s] = (os.clock() - t0) / n
end
local st = pool.stats()
local f, d = B.median(freed), B.median(dropped)
B.emit({
  bench = "dropped_arrays", impl = "glua", device = B.device_name(), iterations = n,
  us_per_iter_free = f * 1e6, us_per_iter_dropped = d * 1e6, ratio = d / f,
  peak_used_mib_free = peak_free / 2 ^ 20, peak_used_mib = st.peak_used / 2 ^ 20,
})
