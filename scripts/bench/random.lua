-- Random numbers made on the device: cuda.rand and cuda.randn of 2^28
-- float32 (2^16 on the CPU backend), each call a new array freed at once,
-- device time per call (B.device_time) and GB/s of output. The target is
-- randn at or under PyTorch's torch.randn time (random.py), and in rand's
-- speed class: randn_over_rand is the ratio of the two times here.
--   glua scripts/bench/random.lua [log2 elements]
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda = require("cuda")

local n = math.floor(2 ^ (tonumber(arg[1]) or (B.gpu and 28 or 16)))
local device = B.device_name()
local reps, samples = B.gpu and 20 or 2, B.gpu and 5 or 2
local times = {}
for _, gen in ipairs({ "rand", "randn" }) do
  local f = cuda[gen]
  times[gen] = B.device_time(function() f(n, "float32", 5):free() end, reps, samples)
  B.emit({ bench = gen, impl = "glua", device = device, dtype = "float32", n = n, ms = times[gen] * 1e3,
    gbs = 4 * n / times[gen] / 1e9, randn_over_rand = gen == "randn" and times.randn / times.rand or nil })
end
