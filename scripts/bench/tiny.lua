-- The cost of a tiny in-place kernel called from a Lua loop: all overhead,
-- almost no work. Peer: tiny.py (PyTorch's add_ from a Python loop).
--   glua scripts/bench/tiny.lua [calls]
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda, kernels = require("cuda"), require("kernels")

local calls = tonumber(arg[1]) or (B.gpu and 100000 or 20000)
local x, y = cuda.rand(16, "float32", 1), cuda.rand(16, "float32", 2)
local per_op = B.wall_time(function() kernels.add(x, y) end, calls, 5)
B.emit({ bench = "tiny_add", impl = "glua", device = B.device_name(), calls = calls, us_per_op = per_op * 1e6 })
