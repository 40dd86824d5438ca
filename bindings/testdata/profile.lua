-- Memory you can look at: pool.record and pool.dump_profile.
local cuda = require("cuda")
local pool = require("pool")

-- Without a recording there is nothing to draw, and the error says how to
-- start one; no file is left behind.
local path = tmpdir .. "/mem.html"
check.error("pool.dump_profile: no memory events were recorded: start recording first (pool.record(true)", pool.dump_profile, path)
assert(io.open(path) == nil, "a failed dump left a file")

local before = cuda.zeros(256) -- alive when recording starts: the profile's first array
pool.record(true)
local keep = {}
for i = 1, 4 do keep[i] = cuda.zeros({ 256, 1024 }) end
for i = 1, 3 do cuda.zeros({ 64, 1024 }):free() end
keep[1]:free()
pool.record(false)
local after = cuda.zeros(8) -- not recorded

pool.dump_profile(path)
local f = assert(io.open(path))
local page = f:read("*a")
f:close()
assert(page:find("<title>Memory profile: testdata/profile.lua</title>", 1, true), "the title is the calling script")
assert(page:find('<svg id="timeline"', 1, true), "the page has the timeline")
assert(page:find('id="segments-peak"', 1, true), "the page has the peak's segments")
assert(page:find('<td class="site">testdata/profile.lua:14</td>', 1, true), "the table names the allocating line")
assert(page:find("profile.lua:11", 1, true), "the array alive when recording began is in it")
assert(not page:find("profile.lua:18", 1, true), "an allocation after pool.record(false) was recorded")

pool.dump_profile(tmpdir .. "/titled.html", "my job")
f = assert(io.open(tmpdir .. "/titled.html"))
assert(f:read("*a"):find("<title>Memory profile: my job</title>", 1, true), "the title given")
f:close()

-- A path that cannot be written is named in the error, and the arrays live on.
local bad = tmpdir .. "/no/such/dir/mem.html"
check.error("pool.dump_profile: writing " .. bad .. ": cannot create a file in its directory", pool.dump_profile, bad)
check.error("pool.record: bad argument #1 (true or false expected, got string)", pool.record, "yes")
check.eq(keep[2]:is_freed() or before:is_freed() or after:is_freed(), false, "arrays live after the errors")
