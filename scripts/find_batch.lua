-- A batch size too large for the card: one call finds the largest that
-- runs. The step multiplies a batch of rows by a weight matrix; its
-- memory grows with the batch, and a hard limit stands in for a small GPU.
--
--   glua scripts/find_batch.lua [features] [hard limit]
local batch, cuda, kernels, pool = require("batch"), require("cuda"), require("kernels"), require("pool")

local features = math.floor(tonumber(arg[1]) or 1024)
local limit = arg[2] or "256MiB"
pool.set_limit({ hard = limit })

local W = cuda.rand({ features, features }, "float32", 1)
local tried = {}
local function step(n)
  tried[#tried + 1] = n
  local X = cuda.rand({ n, features }, "float32", 2) -- the batch, the same each run
  local Y = cuda.zeros({ n, features })   -- its activations
  kernels.matmul(Y, X, W)
  return kernels.norm(Y)
end

local n, norm = batch.find_size(step, { start = 2 ^ 20 })
print(string.format("largest batch under a %s hard limit: %d rows of %d features (tried %s)",
  limit, n, features, table.concat(tried, ", ")))
print(string.format("its activations' norm: %.4g; arrays still held: %d (the weights)", norm, pool.stats().live_arrays))
assert(pool.stats().live_arrays == 1, "find_size frees what each try allocated")
