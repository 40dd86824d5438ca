-- Data parallel matrix product over the ranks of a job, C = A·B: A's rows
-- are split across the ranks, B is broadcast from rank 0, each rank
-- multiplies its rows by B on its own device, and dist.all_gather gives
-- every rank all of C. Rank 0 times the same product on one device alone,
-- checks the gathered C against it and prints the speed-up.
--
--   glua --nproc 2 scripts/dist_matmul.lua 32768 bfloat16     two GPUs
--   glua --nproc 2 --allow-oversubscribe --backend cpu scripts/dist_matmul.lua 256
--   glua scripts/dist_matmul.lua [n] [dtype] [reps] [pieces]  one process
--
-- Each rank's rows come in pieces (8 with several ranks, 1 alone) of p =
-- ceil(n / (ranks · pieces)) rows: rank r's piece j is rows (j·ranks + r)·p
-- + 1 .. + p of A and of C, so that the gather of piece j from every rank
-- lands in place, C's rows (j·ranks)·p + 1 .. (j + 1)·ranks·p. A step
-- multiplies piece after piece and gathers each asynchronously as soon as
-- it is made (dist.all_gather's async), so that the gather of one piece
-- overlaps the product of the next and only the last piece's gather is
-- not hidden. all_gather needs blocks of one size, so rows past n are
-- zero padding, trimmed from the gathered C (a view of its first n rows).
-- A step is timed from a barrier to the end of the last gather
-- (communication included), the median of reps steps and the slowest
-- rank's time; B's broadcast happens once, before, and is timed on its
-- own.
local B = dofile((arg[0]:match("(.*/)") or "./") .. "bench/_bench.lua")
local cuda, kernels, dist = require("cuda"), require("kernels"), require("dist")

local n = math.floor(tonumber(arg[1]) or 4096)
local dtype = arg[2] or "float32"
local reps = math.floor(tonumber(arg[3]) or 5)
local rank, size = dist.rank(), dist.size()
local pieces = math.floor(tonumber(arg[4]) or (size > 1 and 8 or 1))
assert(n >= 1 and reps >= 1 and pieces >= 1, "usage: glua scripts/dist_matmul.lua [n >= 1] [dtype] [reps >= 1] [pieces >= 1]")
local tolerance = ({ float64 = 1e-12, float32 = 1e-5, float16 = 1e-2, bfloat16 = 1e-2 })[dtype]
assert(tolerance, "dtype must be float64, float32, float16 or bfloat16, got " .. tostring(dtype))

local p = math.ceil(n / (size * pieces)) -- rows of a piece
local m = p * pieces -- rows of a rank, padding included

-- Every rank draws the same A from one seed and keeps its pieces' rows; B
-- comes from rank 0.
local A = cuda.rand({ n, n }, dtype, 1)
local A_block = cuda.zeros({ m, n }, dtype)
for j = 0, pieces - 1 do
  local first = (j * size + rank) * p + 1
  local last = math.min(first + p - 1, n) -- last < first: a piece of padding only
  if last >= first then kernels.copy(A_block:rows(j * p + 1, j * p + last - first + 1), A:rows(first, last)) end
end
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
local A_piece, C_piece, gathered = {}, {}, {}
for j = 1, pieces do
  A_piece[j] = A_block:rows((j - 1) * p + 1, j * p)
  C_piece[j] = C_block:rows((j - 1) * p + 1, j * p)
  gathered[j] = C_padded:rows((j - 1) * size * p + 1, j * size * p)
end

-- slowest is the largest of every rank's secs.
local function slowest(secs)
  local t = cuda.to_device({ secs }, "float64")
  dist.all_reduce(t, "max")
  return t[1]
end

local function step()
  for j = 1, pieces do
    kernels.matmul(C_piece[j], A_piece[j], Bm)
    dist.all_gather(gathered[j], C_piece[j], { async = true })
  end
  dist.wait()
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
  if pieces > 1 then
    print(string.format("each rank's rows in %d pieces of %d, each gathered while the next is multiplied", pieces, p))
  end
  print(string.format("broadcast of B     %10.3f ms", 1e3 * broadcast_secs))
  print(string.format("one device         %10.3f ms   %8.2f TFLOP/s", 1e3 * one_secs, flops / one_secs / 1e12))
  print(string.format("%-18s %10.3f ms   %8.2f TFLOP/s   speed-up %.2fx",
    (size == 1 and "1 rank" or size .. " ranks") .. ", gathered", 1e3 * dist_secs, flops / dist_secs / 1e12,
    one_secs / dist_secs))
  print(string.format("check: gathered C against one device's A·B, rel. error %.2g (tolerance %g)", err, tolerance))
  assert(err <= tolerance, "the gathered product disagrees with one device's")
end
