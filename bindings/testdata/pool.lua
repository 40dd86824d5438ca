-- The pool from Lua: statistics, limits, scopes, out-of-memory recovery.
local cuda = require("cuda")
local kernels = require("kernels")
local pool = require("pool")

local MiB = 1024 * 1024
assert(type(pool.status()) == "string" and pool.status():find("Memory pool usage"), "status")
local s0 = pool.stats()
for _, k in ipairs({ "used", "reserved", "peak_used", "peak_reserved", "allocations", "frees", "cache_hits",
  "cache_misses", "reclaims", "oom_retries", "soft_limit", "hard_limit", "device_free", "device_total" }) do
  assert(type(s0[k]) == "number", "stats." .. k)
end
local caching = pool.strategy() == "caching"
assert(caching or pool.strategy() == "none" or pool.strategy() == "cuda", "strategy " .. pool.strategy())

-- allocations and frees are counted exactly
local a = cuda.device_array({ 256, 1024 }) -- 1 MiB
local s1 = pool.stats()
check.eq(s1.allocations, s0.allocations + 1, "allocations")
assert(s1.used >= s0.used + MiB, "used grows by the array")
pool.free(a)
check.eq(a:is_freed(), true, "pool.free")
local s2 = pool.stats()
check.eq(s2.frees, s1.frees + 1, "frees")
check.eq(s2.used, s0.used, "used back to where it was")

-- scope frees what it allocated and did not return, and hands back results
local outer = cuda.zeros(4)
local inner
local r1, r2 = pool.scope(function(x, y)
  inner = cuda.zeros({ 512, 512 })
  local kept = cuda.ones(8)
  return kept, x + y
end, 2, 3)
check.eq(r2, 5, "scope passes arguments and results")
check.eq(inner:is_freed(), true, "scope freed the unreturned array")
check.eq(r1:is_freed(), false, "scope kept the returned array")
check.eq(outer:is_freed(), false, "scope left arrays from outside alone")
local t = pool.scope(function() return { cuda.ones(2), { cuda.ones(3) } } end)
check.eq(t[2][1]:is_freed(), false, "arrays returned inside tables are kept")

-- scope frees on error too, and the error comes through unchanged
local leaked
local ok, err = pcall(pool.scope, function()
  leaked = cuda.zeros({ 256, 256 })
  error("boom")
end)
check.eq(ok, false, "error propagates")
assert(tostring(err):find("boom"), "error message kept: " .. tostring(err))
check.eq(leaked:is_freed(), true, "scope freed on error")

-- nested scopes hand kept arrays outward
local survivor = pool.scope(function()
  local x = pool.scope(function() return cuda.ones(5) end)
  check.eq(x:is_freed(), false, "kept by the inner scope")
  return x
end)
check.eq(survivor:is_freed(), false, "kept by both scopes")

-- limits
pool.set_limit({ soft = "32MiB", hard = "64MiB" })
local l = pool.limits()
check.eq(l.soft, 32 * MiB, "soft limit")
check.eq(l.hard, 64 * MiB, "hard limit")
check.eq(pool.stats().hard_limit, 64 * MiB, "stats show the limit")

-- the seed scenario: a loop that allocates and drops 4 MiB arrays under a
-- 64 MiB cap runs to the end; the garbage collector's cleanups return them.
for i = 1, 1000 do
  local x = cuda.device_array({ 1024, 1024 }) -- 4 MiB, dropped each iteration
  if i % 250 == 0 then kernels.fill(x, i) end
end
assert(pool.stats().reserved <= 64 * MiB, "reserved stays under the hard limit")

-- an allocation over the cap fails with an explanation, and nothing is lost
local live = cuda.ones({ 1024, 1024 })
local ok2, oom = pcall(cuda.device_array, { 1024, 1024 * 20 }) -- 80 MiB
check.eq(ok2, false, "over the hard limit")
oom = tostring(oom)
local memory = cuda.backend() == "cuda" and "GPU memory" or "CPU backend memory"
assert(oom:find("cuda.device_array: out of " .. memory .. ": tried to allocate 80.00 MiB", 1, true), oom)
assert(oom:find("hard limit 64.00 MiB", 1, true), oom)
check.eq(kernels.sum(live), 1024 * 1024, "live array untouched after OOM")
local after = cuda.zeros({ 1024, 1024 })
check.eq(kernels.sum(after), 0, "runtime usable after OOM")
after:free()

-- reclaim returns cached memory
pool.free(live)
collectgarbage()
if caching then
  local cached = pool.stats().reserved - pool.stats().used
  assert(cached >= 4 * MiB, "the freed 4 MiB array is cached: " .. cached)
  local released = pool.reclaim()
  assert(released >= 4 * MiB, "reclaim released the cached segments: " .. released)
  local s3 = pool.stats()
  check.eq(s3.reserved - s3.used, cached - released, "reserved shrank by what was released")
else
  assert(pool.reclaim() >= 0, "reclaim")
end
pool.set_limit({ soft = false, hard = false })
check.eq(pool.limits().hard, false, "limit cleared")
check.eq(pool.reclaim("1MiB") >= 0, true, "reclaim with a size")

-- what holds my memory: snapshot lists live arrays with where they were made,
-- report groups them by line, largest first
local big = cuda.zeros({ 1024, 512 }, "float64") -- 4 MiB
local smalls = {}
for i = 1, 3 do smalls[i] = cuda.zeros(16, "int32") end
local found
for _, b in ipairs(pool.snapshot()) do
  if b.nbytes == 4 * MiB and b.dtype == "float64" and b.shape[1] == 1024 and b.shape[2] == 512 then found = b end
end
assert(found, "the 4 MiB array is in the snapshot")
assert(found.site:find("pool.lua:%d+$"), "snapshot names the allocating line: " .. found.site)
local report = pool.report()
local first = report:match("\n([^\n]+)")
assert(first:find("4.0 MiB", 1, true) and first:find(found.site, 1, true), "largest site first:\n" .. report)
assert(report:find("3 arrays", 1, true), "the three small arrays are grouped:\n" .. report)
big:free()

-- limits say what they do: a hard limit below what live arrays hold is
-- refused and the old limits stay; one above the device is refused; "0" is
-- an error, not "no limit"; "none" and false clear a limit
pool.set_limit({ hard = "256MiB" })
local keep = cuda.zeros({ 1024, 1024 * 2 }) -- 8 MiB
local err = check.error("hard limit 1.00 MiB is below", pool.set_limit, { hard = "1MiB" })
assert(err:find("the limits stay soft none, hard 256.00 MiB", 1, true), err)
assert(not err:find("SetLimits", 1, true), "the message names no Go function: " .. err)
check.eq(pool.limits().hard, 256 * MiB, "a refused limit leaves the old one")
keep:free()
local total = pool.stats().device_total
check.error("is more than the device's", pool.set_limit, { hard = total * 2 })
check.eq(pool.limits().hard, 256 * MiB, "still the old limit")
check.error("\"0\" is no memory at all", pool.set_limit, { hard = "0" })
pool.set_limit({ hard = "none" })
check.eq(pool.limits().hard, false, "\"none\" clears the limit")

-- a coroutine that yields inside a function glua calls back (pool.scope,
-- cuda.timer) gets Lua 5.1's error for a yield across a C call, and the
-- scope still frees what it allocated
local before = pool.stats().live_arrays
for _, call in ipairs({
  function() pool.scope(function() local a = cuda.zeros({ 256 }); coroutine.yield(a) end) end,
  function() cuda.timer(function() coroutine.yield(1) end) end,
}) do
  local co = coroutine.create(call)
  local ok, err = coroutine.resume(co)
  check.eq(ok, false, "a yield inside a callback")
  assert(tostring(err):find("attempt to yield across metamethod/C-call boundary", 1, true), tostring(err))
  check.eq(coroutine.status(co), "dead", "the coroutine after the refused yield")
end
check.eq(pool.stats().live_arrays, before, "arrays live after the refused yields")

-- a call whose output partly overlaps an input (NumPy's a[1:] += a[:-1])
-- reads the input first through a temporary from the pool, counted in
-- pool.stats() and pool.report(); the same memory twice takes none
local a = cuda.ones({ 200000, 1 })
local s0 = pool.stats()
kernels.add(a, a)
kernels.add(a:rows(3, 200000), a:rows(3, 200000))
check.eq(pool.stats().overlap_temporaries, s0.overlap_temporaries, "temporaries for exact aliasing")
check.eq(pool.stats().allocations, s0.allocations, "allocations for exact aliasing")
kernels.fill(a, 1)
kernels.add(a:rows(2, 200000), a:rows(1, 199999))
check.eq(kernels.sum(a), 1 + 2 * 199999, "sum of a[1:] += a[:-1] on ones")
local s1 = pool.stats()
check.eq(s1.overlap_temporaries, s0.overlap_temporaries + 1, "temporaries for a partial overlap")
check.eq(s1.overlap_bytes, s0.overlap_bytes + 199999 * 4, "bytes of the temporary")
check.eq(s1.used, s0.used, "the temporary went back to the pool")
assert(pool.report():find("Overlap temporaries: " .. s1.overlap_temporaries .. " (", 1, true), pool.report())
a:free()
