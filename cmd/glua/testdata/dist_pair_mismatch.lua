-- Two ranks whose send and recv cannot pair: arg[1] "both_send" has each
-- rank send to the other, "sizes" has rank 0 send 4 float32 elements and
-- rank 1 receive 5, and "sizes_late" the same with rank 0 a third of a
-- second late, so that rank 1's recv is known first (on the cuda backend,
-- rank 0 then finds the pair wrong before it goes into NCCL, and rank 1
-- must not go in waiting for it). Each rank must get an error naming both
-- calls, from the call itself or from the barrier after it, at once
-- rather than at the timeout.
local cuda, dist = require("cuda"), require("dist")

local rank = dist.rank()
local ok, err
if arg[1] == "both_send" then
	ok, err = pcall(dist.send, cuda.zeros({ 4 }), 1 - rank)
elseif arg[1] == "sizes" or arg[1] == "sizes_late" then
	if rank == 0 then
		local start = os.clock() -- wall-clock time in glua
		while arg[1] == "sizes_late" and os.clock() - start < 0.3 do end
		ok, err = pcall(dist.send, cuda.zeros({ 4 }), 1)
	else
		ok, err = pcall(dist.recv, cuda.zeros({ 5 }), 0)
	end
else
	error("usage: dist_pair_mismatch.lua both_send|sizes|sizes_late")
end
if ok then
	ok, err = pcall(dist.barrier)
end
print(("error: %s"):format(ok and "none" or tostring(err)))
