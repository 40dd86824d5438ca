-- Bandwidth of a memory-bound kernel against a plain device-to-device copy
-- of the same size, in one run.
--   glua scripts/bench/axpy.lua [log2 elements]   (default 28 on the GPU, 20 on the CPU)
-- Peer: axpy.py.
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda, kernels = require("cuda"), require("kernels")

local n = 2 ^ (tonumber(arg[1]) or (B.gpu and 28 or 20))
local x = cuda.rand(n, "float32", 1)
local y = cuda.rand(n, "float32", 2)
local z = cuda.device_array(n, "float32")
local reps = B.gpu and 20 or 3
local copy = B.device_time(function() z:copy_from(x) end, reps, 5)
local axpy = B.device_time(function() kernels.axpy(y, 1e-3, x) end, reps, 5)
local bytes = 4 * n
-- Bytes moved: a copy reads and writes each element once; axpy reads x and y
-- and writes y.
local copy_gbs, axpy_gbs = 2 * bytes / copy / 1e9, 3 * bytes / axpy / 1e9
B.emit({ bench = "copy_d2d", impl = "glua", device = B.device_name(), n = n, ms = copy * 1e3, gbs = copy_gbs })
B.emit({ bench = "axpy", impl = "glua", device = B.device_name(), n = n, ms = axpy * 1e3, gbs = axpy_gbs,
  fraction_of_copy = axpy_gbs / copy_gbs })
