-- The seed scenario: a product of float64 matrices too large for the
-- device's memory (a hard limit stands in for a small card). batch.matmul
-- multiplies host matrices by tiles that fit, with the next tiles
-- uploading while the current ones multiply.
--
--   glua scripts/out_of_core.lua [n] [hard limit]
--
-- The defaults are 10000 and 1GiB on a GPU; on the CPU backend, where that
-- product takes minutes, 2000 and 64MiB: the same three matrices too large
-- for the limit, a second or so of work.
local batch, cuda, kernels, pool = require("batch"), require("cuda"), require("kernels"), require("pool")

local cpu = cuda.backend() == "cpu"
local n = math.floor(tonumber(arg[1]) or (cpu and 2000 or 10000))
local limit = arg[2] or (cpu and "64MiB" or "1GiB")
pool.set_limit({ hard = limit })

-- A and B on the host, random; each made on the device and downloaded.
local function random_host(seed)
  local d = cuda.rand({ n, n }, "float64", seed)
  local h = d:copy_to_host()
  d:free()
  return h
end
local A, B = random_host(1), random_host(2)
print(string.format("A and B: %dx%d float64, %s each; the device may hold %s", n, n,
  tostring(A):match("^[^\n]*%] ([^\n]*)"), limit))

local t0 = os.clock()
local C = batch.matmul(A, B, { verbose = true })
local seconds = os.clock() - t0
print(string.format("C = A·B in %.2f s: %.1f GFLOP/s", seconds, 2 * n ^ 3 / seconds / 1e9))

-- Checked against the host: a few entries as dot products.
local worst = 0
for _, ij in ipairs({ { 1, 1 }, { n, n }, { math.ceil(n / 2), 1 }, { 1, n } }) do
  local i, j = ij[1], ij[2]
  local s = 0
  local Ai = A[i] -- a row: a view, read element by element below
  for p = 1, n do s = s + Ai[p] * B[p][j] end
  worst = math.max(worst, math.abs(C[i][j] - s) / math.max(1, math.abs(s)))
end
print(string.format("largest relative difference from the host's dot products: %.2g", worst))
assert(worst < 1e-12, "the tiled product differs from the host's")

-- And a smaller case against the in-core product on the device, with
-- the limit lifted so that the in-core product fits.
pool.set_limit({ hard = false })
local m = math.min(n, 300)
local a, b = cuda.rand({ m, m }, "float64", 3), cuda.rand({ m, m }, "float64", 4)
local c = cuda.zeros({ m, m }, "float64")
kernels.matmul(c, a, b)
local tiled = batch.matmul(a:copy_to_host(), b:copy_to_host(), { budget = 64 * m * 8 })
local diff = kernels.max_abs_diff(cuda.to_device(tiled), c)
print(string.format("%dx%d under a budget of %d bytes against the in-core product: max difference %.2g", m, m, 64 * m * 8, diff))
assert(diff < 1e-9, "the tiled product differs from the in-core one")
