-- Sums 1..n over the ranks of a job: each rank reduces its own shard of
-- the numbers on its device, dist.all_reduce adds the ranks' partial sums,
-- and every rank then holds the total that one process would compute.
--
--   glua scripts/dist_sum.lua [n]                      one process
--   glua --nproc 2 --allow-oversubscribe --backend cpu scripts/dist_sum.lua [n]
local cuda, kernels, dist = require("cuda"), require("kernels"), require("dist")

local n = tonumber(arg[1]) or 1000000
local rank, size = dist.rank(), dist.size()

-- Rank r takes the numbers first..last, a near-equal share of 1..n.
local first = math.floor(rank * n / size) + 1
local last = math.floor((rank + 1) * n / size)
local shard = cuda.host_array({math.max(last - first + 1, 1)}, "float64")
for i = first, last do shard[i - first + 1] = i end
if last < first then shard[1] = 0 end

local partial = cuda.to_device({kernels.sum(cuda.to_device(shard))}, "float64")
dist.all_reduce(partial, "sum")
local total = partial[1]

local want = n * (n + 1) / 2
assert(total == want, ("rank %d: total %.17g, want %.17g"):format(rank, total, want))
if rank == 0 then
	print(("sum of 1..%d over %d ranks: %.17g"):format(n, size, total))
end
