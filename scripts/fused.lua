-- A chain of five elementwise steps, y = ((a·x + b)·x - c) / d, computed on
-- the device three ways, timed side by side and checked against each other:
--
--   glua scripts/fused.lua [n] [reps]
--
-- The defaults are 2^26 elements and 20 reps on a GPU; on the CPU backend,
-- where kernels.map's evaluator would take minutes over those, 2^18 and 5.
--
-- (a) in place:  one built-in kernel per step into a preallocated y
--                (kernels.fill and axpy, then mul, add_scalar, div_scalar):
--                five launches, y read and written by each;
-- (b) operators: ((x * a + b) * x - c) / d, five launches and a new array
--                for every step's result;
-- (c) fused:     one kernels.map of the whole expression: one launch that
--                reads x once and writes y once.
-- Each time is the median of reps passes, each pass ending in a
-- synchronisation (B.wall_time: the cost as the Lua loop sees it, launches
-- and allocations included). GB/s is effective bandwidth: the bytes the
-- chain cannot avoid, x read and y written once, over the time of a pass;
-- only the fused kernel moves no more than that. The comparison is one for
-- the GPU: on the CPU backend kernels.map runs in the jit's evaluator, far
-- slower than the built-in kernels, and the line shows only that the three
-- agree.
-- (d) graph:     the five launches of (a), recorded once with cuda.graph
--                and replayed: one launch from the host for the five
--                kernels, which still read and write y five times.
local B = dofile((arg[0]:match("(.*/)") or "./") .. "bench/_bench.lua")
local cuda = require("cuda")
local kernels = require("kernels")

local n = math.floor(tonumber(arg[1]) or (B.gpu and 2 ^ 26 or 2 ^ 18))
local reps = math.floor(tonumber(arg[2]) or (B.gpu and 20 or 5))
assert(n >= 1 and reps >= 1, "usage: glua scripts/fused.lua [n >= 1] [reps >= 1]")

local a, b, c, d = 1.5, 0.25, 0.75, 2
local x = cuda.rand(n, "float32", 1)
local y = { inplace = cuda.device_array(n, "float32"), fused = cuda.device_array(n, "float32") }

local variants = {
  { name = "in place", key = "inplace", run = function()
    local out = y.inplace
    kernels.fill(out, b)
    kernels.axpy(out, a, x) -- a·x + b
    kernels.mul(out, x)
    kernels.add_scalar(out, -c)
    kernels.div_scalar(out, d)
  end },
  { name = "operators", key = "operators", run = function()
    y.operators = ((x * a + b) * x - c) / d
  end },
  { name = "fused", key = "fused", run = function()
    kernels.map(function(x, a, b, c, d) return ((x * a + b) * x - c) / d end, y.fused, x, a, b, c, d)
  end },
}
y.graph = cuda.device_array(n, "float32")
local chain = cuda.graph(function()
  local out = y.graph
  kernels.fill(out, b)
  kernels.axpy(out, a, x)
  kernels.mul(out, x)
  kernels.add_scalar(out, -c)
  kernels.div_scalar(out, d)
end)
variants[#variants + 1] = { name = "graph", key = "graph", run = function() chain:launch() end }

-- rel is ||u - v|| / ||v||, on the device.
local function rel(u, v)
  local diff = u:clone()
  kernels.sub(diff, v)
  return kernels.norm(diff) / kernels.norm(v)
end

print(string.format("y = ((%g·x + %g)·x - %g) / %g on %d float32 (%s), median of %d passes, %s backend",
  a, b, c, d, n, B.device_name(), reps, cuda.backend()))
local bytes = 2 * 4 * n -- x read and y written once
variants[3].run()          -- the reference for the first variant's check
local times = {}
for _, v in ipairs(variants) do
  local secs = B.wall_time(v.run, 1, reps, 2)
  times[v.key] = secs
  local err = rel(y[v.key], y.fused)
  print(string.format("%-10s %10.3f ms/pass %9.2f GB/s   rel. error against fused %.2g", v.name, 1e3 * secs,
    bytes / secs / 1e9, err))
  assert(err < 1e-6, v.name .. " disagrees with the fused kernel")
end
print(string.format("fused is %.2fx in place, %.2fx operators and %.2fx the graph", times.inplace / times.fused,
  times.operators / times.fused, times.graph / times.fused))
chain:free()
