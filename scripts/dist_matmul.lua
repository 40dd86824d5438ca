-- Data parallel matrix product over the ranks of a job, C = A·B: A's rows
-- are split across the ranks, B is broadcast from rank 0, each rank
-- multiplies its row block by B on its own device, and dist.all_gather
-- gives every rank all of C. Rank 0 times the same product on one device
-- alone, checks the gathered C against it and prints the speed-up.
--
--   glua --nproc 2 scripts/dist_matmul.lua 32768 bfloat16     two GPUs
--   glua --nproc 2 --allow-oversubscribe --backend cpu scripts/dist_matmul.lua 256
--   glua scripts/dist_matmul.lua [n] [dtype] [reps]           one process
--
-- Rank r takes rows r·m + 1 .. (r + 1)·m, m = ceil(n / ranks); all_gather
-- needs blocks of one size, so the last block is padded with zero rows and
-- the padding trimmed from the gathered C (a view of its first n rows).
-- A distributed step is the rank's matmul and the all_gather, timed from a
-- barrier to the end of the gather (communication included), the median of
-- reps steps and the slowest rank's time; B's broadcast happens once,
-- before, and is timed on its own.
local B = dofile((arg[0]:match("(.*/)") or "./") .. "bench/_bench.lua")
local cuda, kernels, dist = require("cuda"), require("kernels"), require("dist")

local n = math.floor(tonumber(arg[1]) or 4096)
local dtype = arg[2] or "float32"
local reps = math.floor(tonumber(arg[3]) or 5)
assert(n >= 1 and reps >= 1, "usage: glua scripts/dist_matmul.lua [n >= 1] [dtype] [reps >= 1]")
local tolerance = ({ float64 = 1e-12, float32 = 1e-5, float16 = 1e-2, bfloat16 = 1e-2 })[dtype]
assert(tolerance, "dtype must be float64, float32, float16 or bfloat16, got " .. tostring(dtype))

local rank, size = dist.rank(), dist.size()
local m = math.ceil(n / size)
local first, last = rank * m + 1, math.min((rank + 1) * m, n) -- last < first: a block of padding only

-- Every rank draws the same A from one seed and keeps its rows; B comes
-- from rank 0.
local A = cuda.rand({ n, n }, dtype, 1)
local A_block = cuda.zeros({ m, n }, dtype)
if last >= first then kernels.copy(A_block:rows(1, last - first + 1), A:rows(first, last)) end
if rank ~= 0 then A:free() end
local Bm = rank == 0 and cuda.rand({ n, n }, dtype, 2) or cuda.device_array({ n, n }, dtype)
dist.barrier()
local t0 = os.clock()
dist.broadcast(Bm, 0)
cuda.synchronize()
local broadcast_secs = os.clock() - t0

local C_block = cuda.device_array({ m, n }, dtype)
local C_padded = cuda.device_array({ size * m, n }, dtype)
local C = C_padded:rows(1, n)

-- slowest is the largest of every rank's secs.
local function slowest(secs)
  local t = cuda.to_device({ secs }, "float64")
  dist.all_reduce(t, "max")
  return t[1]
end

local function step()
  kernels.matmul(C_block, A_block, Bm)
  dist.all_gather(C_padded, C_block)
end
dist.barrier()
local dist_secs = slowest(B.wall_time(step, 1, reps, 1))

-- One device alone, on rank 0 while the others wait.
local one_secs, err
if rank == 0 then
  local C_one = cuda.device_array({ n, n }, dtype)
  one_secs = B.wall_time(function() kernels.matmul(C_one, A, Bm) end, 1, reps, 1)
  local diff = C:clone()
  kernels.sub(diff, C_one)
  err = kernels.norm(diff) / kernels.norm(C_one)
end
dist.barrier()

if rank == 0 then
  local flops = 2 * n ^ 3
  print(string.format("C = A·B, %dx%d %s, %d rank%s of %d rows (%d of padding), %s backend", n, n, dtype, size,
    size == 1 and "" or "s", m, size * m - n, cuda.backend()))
  print(string.format("broadcast of B     %10.3f ms", 1e3 * broadcast_secs))
  print(string.format("one device         %10.3f ms   %8.2f TFLOP/s", 1e3 * one_secs, flops / one_secs / 1e12))
  print(string.format("%-18s %10.3f ms   %8.2f TFLOP/s   speed-up %.2fx",
    (size == 1 and "1 rank" or size .. " ranks") .. ", gathered", 1e3 * dist_secs, flops / dist_secs / 1e12,
    one_secs / dist_secs))
  print(string.format("check: gathered C against one device's A·B, rel. error %.2g (tolerance %g)", err, tolerance))
  assert(err <= tolerance, "the gathered product disagrees with one device's")
end
