-- Allocating and freeing device memory from a Lua loop: 1 MiB arrays served
-- by the pool's cache. Peer: alloc.py (PyTorch and CuPy).
--   glua scripts/bench/alloc.lua [calls]
local B = dofile((arg[0]:match("(.*/)") or "./") .. "_bench.lua")
local cuda, pool = require("cuda"), require("pool")

local calls = tonumber(arg[1]) or 200000
local per_op = B.wall_time(function() cuda.device_array(262144):free() end, calls, 5)
B.emit({ bench = "alloc_free_1mib", impl = "glua", device = B.device_name(), strategy = pool.strategy(),
  calls = calls, us_per_op = per_op * 1e6 })
