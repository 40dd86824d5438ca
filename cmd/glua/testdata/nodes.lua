-- Each rank of a job of several nodes says where it stands, by the
-- launcher's variables (torchrun's and glua's) and by dist, then the
-- ranks sum rank+1 over the job; with arg[1] "spin" they then spin for
-- arg[2] seconds and leave a survivor file, and with "fail" rank arg[2]
-- raises an error instead.
local cuda, dist = require("cuda"), require("dist")
local function env(name) return tostring(os.getenv(name)) end
print(("rank %s of %s local %s of %s node %s of %s master %s:%s comm %s dist %d %d %d"):format(
	env("RANK"), env("WORLD_SIZE"), env("LOCAL_RANK"), env("LOCAL_WORLD_SIZE"), env("GROUP_RANK"), env("GROUP_WORLD_SIZE"),
	env("MASTER_ADDR"), env("MASTER_PORT"), env("NCCL_COMM_ID"), dist.rank(), dist.size(), dist.local_rank()))
local x = cuda.full({ 3 }, dist.rank() + 1)
dist.all_reduce(x, "sum")
print(("sum %g"):format(x[1]))
io.stdout:flush()
if arg[1] == "spin" then
	local start = os.clock()
	while os.clock() - start < tonumber(arg[2]) do end
	io.open("survivor-" .. dist.rank(), "w"):close()
elseif arg[1] == "fail" and dist.rank() == tonumber(arg[2]) then
	error("rank " .. arg[2] .. " fails")
end
dist.barrier()
