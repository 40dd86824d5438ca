-- all_reduce between the ranks of a job, measured as nccl-tests measures
-- it: a float32 sum from 8 B up to a largest size, doubling, each size
-- warmed up and then timed as the median of several samples of reps
-- calls (device time, from a barrier), the slowest rank's time. Rank 0
-- prints one JSON line per size with nccl-tests' bandwidths:
--   algbw = bytes / time,  busbw = algbw · 2(n−1)/n  for n ranks,
-- busbw being the rate each link carries, comparable across rank counts.
--
--   glua --nproc 2 scripts/bench/allreduce.lua [max bytes]   two GPUs (default 1GiB)
--   glua --nproc 2 --allow-oversubscribe --backend cpu scripts/bench/allreduce.lua 64KiB
-- max bytes is a number of bytes or one with KiB, MiB or GiB. Run alone it
-- is a group of one: all_reduce leaves x as it is and busbw is 0.
-- Peer: allreduce.py (torchrun --nproc-per-node 2 scripts/bench/allreduce.py).
-- nproc: 2 (run.sh skips it: it needs several processes)
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda, dist = require("cuda"), require("dist")

local units = { [""] = 1, B = 1, KiB = 2 ^ 10, MiB = 2 ^ 20, GiB = 2 ^ 30 }
local function bytes_of(text)
  local number, unit = tostring(text):match("^(%d+)(%a*)$")
  assert(number and units[unit], "max bytes must be a whole number of bytes, KiB, MiB or GiB, got " .. tostring(text))
  return tonumber(number) * units[unit]
end

local max_bytes = bytes_of(arg[1] or (B.gpu and "1GiB" or "1MiB"))
local elem = 4 -- float32
assert(max_bytes >= 2 * elem, "max bytes must be at least 8")
local rank, size = dist.rank(), dist.size()

-- One buffer of the largest size; each size reduces a view of its start.
-- Zeros: a sum's time does not depend on the values (neither NCCL's nor
-- the CPU ring's has a data-dependent path), and hundreds of sums in place
-- of random numbers would overflow to infinity.
local x = cuda.zeros(math.floor(max_bytes / elem), "float32")

-- reps per sample: enough calls that the events' resolution does not
-- matter for small sizes, few for sizes that take milliseconds.
local function reps_for(nbytes)
  if not B.gpu then return 2 end
  if nbytes <= 2 ^ 20 then return 50 end
  if nbytes <= 2 ^ 26 then return 20 end
  return 5
end

-- Samples per size: enough that a median is not moved by one slow
-- sample, which at 7 moved single sizes by up to a quarter between runs.
local samples = B.gpu and 15 or 3

local bytes = 2 * elem
while bytes <= max_bytes do
  local v = x:rows(1, bytes / elem)
  local reps = reps_for(bytes)
  for _ = 1, 5 do dist.all_reduce(v) end -- warm-up: NCCL sets up its channels on first use
  local times = {}
  for s = 1, samples do
    dist.barrier()
    times[s] = cuda.timer(function()
      for _ = 1, reps do dist.all_reduce(v) end
    end) / reps
  end
  local slowest = cuda.to_device({ B.median(times) }, "float64")
  dist.all_reduce(slowest, "max")
  local secs = slowest[1]
  local algbw = bytes / secs / 1e9
  if rank == 0 then
    B.emit({ bench = "all_reduce", impl = "glua", device = B.device_name(), backend = cuda.backend(),
      ranks = size, dtype = "float32", op = "sum", bytes = bytes, us = secs * 1e6,
      algbw_gbs = algbw, busbw_gbs = algbw * 2 * (size - 1) / size })
  end
  bytes = bytes * 2
end
