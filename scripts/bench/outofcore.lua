-- batch.matmul of n×n float32 host matrices under a hard limit of a quarter
-- of the operands' size, into a new array and into a page-locked out,
-- against the in-core cuBLAS product of the same matrices in the same run
-- (its rate is the peer). Each product's first call in the process is
-- timed alone too (os.clock is glua's wall clock): first_fraction_of_incore
-- is batch.matmul's first call against the warm in-core product, and
-- incore_first_fraction the in-core product's own first call against its
-- later ones; both pay the driver's first load of cuBLAS's kernel for
-- their shapes.
--   glua scripts/bench/outofcore.lua [n]   (default 16384 on the GPU, 256 on the CPU)
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local batch, cuda, kernels, pool = require("batch"), require("cuda"), require("kernels"), require("pool")

local n = math.floor(tonumber(arg[1]) or (B.gpu and 16384 or 256))
local flops = 2 * n ^ 3

local dA, dB = cuda.rand({ n, n }, "float32", 1), cuda.rand({ n, n }, "float32", 2)
local dC = cuda.zeros({ n, n })
cuda.synchronize()
local t0 = os.clock()
kernels.matmul(dC, dA, dB)
cuda.synchronize()
local incore_first = os.clock() - t0
local incore = B.wall_time(function() kernels.matmul(dC, dA, dB) end, 1, 3, 1)
local hA, hB = dA:copy_to_host(), dB:copy_to_host()
dA:free(); dB:free(); dC:free()

local operands = 2 * 4 * n * n
local out = cuda.host_array({ n, n }, "float32", { pinned = true })
pool.reclaim()
pool.set_limit({ hard = math.floor(operands / 4) })
t0 = os.clock()
batch.matmul(hA, hB)
local tiled_first = os.clock() - t0
local tiled = B.wall_time(function() batch.matmul(hA, hB) end, 1, 3, 1)
local into = B.wall_time(function() batch.matmul(hA, hB, { out = out }) end, 1, 3, 1)
pool.set_limit({ hard = false })
B.emit({ bench = "outofcore_matmul", impl = "glua", device = B.device_name(), n = n, dtype = "float32",
  hard_limit_mib = operands / 4 / 2 ^ 20, incore_tflops = flops / incore / 1e12, tiled_tflops = flops / tiled / 1e12,
  fraction_of_incore = incore / tiled, fraction_into_pinned_out = incore / into,
  first_fraction_of_incore = incore / tiled_first, incore_first_fraction = incore / incore_first })
