-- Rank 1 stops answering: it spins for arg[1] seconds without a call,
-- while rank 0 waits in an all_reduce and a barrier. Rank 0 must fail at
-- the timeout naming rank 1, the rank it waited for.
local cuda, dist = require("cuda"), require("dist")

local x = cuda.zeros({ 1000 })
if dist.rank() == 1 then -- the group has formed: this is a rank of it
	local start = os.clock()
	while os.clock() - start < tonumber(arg[1]) do end
end
dist.all_reduce(x, "sum")
dist.barrier()
