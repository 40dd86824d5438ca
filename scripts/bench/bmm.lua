-- Batched matrix products, C[i] = A[i]·B[i], in float32 and bfloat16: many
-- small products (batch_small of 64x64) and a few large ones (batch_large
-- of 512x512), as attention and mixture-of-experts layers make them.
--   glua scripts/bench/bmm.lua [batch_small] [batch_large]
-- Defaults: 1024 and 64 on the GPU, 8 and 1 on the CPU. Peer: bmm.py.
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda, kernels = require("cuda"), require("kernels")

local small = tonumber(arg[1]) or (B.gpu and 1024 or 8)
local large = tonumber(arg[2]) or (B.gpu and 64 or 1)
for _, dtype in ipairs({ "float32", "bfloat16" }) do
  for _, c in ipairs({ { batch = small, n = 64 }, { batch = large, n = 512 } }) do
    local shape = { c.batch, c.n, c.n }
    local A = cuda.rand(shape, dtype, 1)
    local Bm = cuda.rand(shape, dtype, 2)
    local C = cuda.device_array(shape, dtype)
    -- A product of a few microseconds gets longer samples, so that the
    -- wait for each sample's first launch does not weigh in.
    local reps = B.gpu and (c.n <= 64 and 200 or 20) or 1
    local t = B.device_time(function() kernels.matmul(C, A, Bm) end, reps, 5, 3)
    B.emit({ bench = "bmm", impl = "glua", device = B.device_name(), dtype = dtype, batch = c.batch, n = c.n,
      ms = t * 1e3, tflops = 2 * c.batch * c.n ^ 3 / t / 1e12 })
    A:free(); Bm:free(); C:free()
  end
end
