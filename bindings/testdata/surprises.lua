-- What surprised a new user about memory, on every backend and strategy:
-- a host allocation the machine cannot give is an error a script catches,
-- and arrays a loop drops come back without a limit or a free.
local cuda, kernels, pool = require("cuda"), require("kernels"), require("pool")
local MiB = 2 ^ 20

-- 4 TB of host memory: refused before Go is asked for it, and the runtime
-- goes on.
local keep = cuda.to_device({ 1, 2, 3 })
local err = check.error("out of host memory", cuda.host_array, { 1e12 })
assert(err:find("cuda.host_array", 1, true), err)
check.error("out of host memory", cuda.host_array, { 1e6, 1e6 })
check.eq(kernels.sum(keep), 6, "an array made before the refusal")

-- The issue's loop: no limit, nothing freed. A walk of the Lua state at
-- each 16 MiB allocated finds the dropped arrays; where walks are slow (a
-- loaded machine, the race detector) they are spaced out, up to four
-- triggers' worth.
pool.set_limit({ soft = false, hard = false })
pool.reset_peak()
local base = pool.stats().used
for i = 1, 1000 do local t = cuda.rand({ 512, 512 }) end
local bound = 64 * MiB
local peak = pool.stats().peak_used - base
assert(peak <= bound, string.format("dropped arrays piled up to %.0f MiB", peak / MiB))

-- What is still referred to keeps its data through those walks.
local held = { cuda.full({ 1000 }, 3) }
for i = 1, 100 do local t = cuda.rand({ 512, 512 }) end
check.eq(kernels.sum(held[1]), 3000, "an array in a table through the walks")
