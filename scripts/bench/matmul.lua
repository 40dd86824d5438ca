-- Matrix products from a Lua loop: float32, tf32 and bfloat16.
--   glua scripts/bench/matmul.lua [n_fp32] [n_tf32_bf16]
-- Defaults: 4096 and 8192 on the GPU, 256 on the CPU. Peer: matmul.py.
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda, kernels = require("cuda"), require("kernels")

local n32 = tonumber(arg[1]) or (B.gpu and 4096 or 256)
local nbig = tonumber(arg[2]) or (B.gpu and 8192 or 256)
local cases = {
  { dtype = "float32", precision = "default", n = n32 },
  { dtype = "float32", precision = "tf32", n = nbig },
  { dtype = "bfloat16", precision = "default", n = nbig },
}
for _, c in ipairs(cases) do
  local A = cuda.rand({ c.n, c.n }, c.dtype, 1)
  local Bm = cuda.rand({ c.n, c.n }, c.dtype, 2)
  local C = cuda.device_array({ c.n, c.n }, c.dtype)
  local opts = { precision = c.precision }
  local reps = B.gpu and 10 or 2
  local t = B.device_time(function() kernels.matmul(C, A, Bm, opts) end, reps, 5, 3)
  B.emit({ bench = "matmul", impl = "glua", device = B.device_name(), dtype = c.dtype, precision = c.precision,
    n = c.n, ms = t * 1e3, tflops = 2 * c.n ^ 3 / t / 1e12 })
  A:free(); Bm:free(); C:free()
end
