-- Ranks that disagree on a call: arg[1] "shapes" gives rank r 4+r
-- elements, "dtypes" gives each rank another dtype. Every rank must get an
-- error naming the ranks that disagree, at once rather than at the
-- timeout, and the group is then unusable: a later call fails too.
local cuda, dist = require("cuda"), require("dist")

local rank = dist.rank()
local x
if arg[1] == "shapes" then
	x = cuda.zeros({ 4 + rank }, "float32")
elseif arg[1] == "dtypes" then
	x = cuda.zeros({ 4 }, ({ "float32", "float64", "int32" })[rank + 1])
else
	error("usage: dist_mismatch.lua shapes|dtypes")
end

local ok, err = pcall(dist.all_reduce, x, "sum")
print(("%s: %s"):format(ok and "no error" or "error", tostring(err)))
ok, err = pcall(dist.barrier)
print(("then: %s"):format(ok and "no error" or tostring(err)))
