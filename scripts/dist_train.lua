-- Data-parallel training, the loop to copy: a least-squares model
-- y ≈ X·w trained by SGD over .npy data that batch.iter deals out among
-- the ranks (shard = true). Each step every rank adds up the gradient of
-- its own batches, dist.all_reduce sums the ranks' gradients, and every
-- rank takes the same step, so the weights stay identical on every rank
-- and equal, up to the order of float additions, to what one process
-- computes taking all of a step's batches itself.
--
--   glua scripts/dist_train.lua [steps [data [weights.npy]]]        one process
--   glua --nproc 2 scripts/dist_train.lua [steps [data [weights.npy]]]
--
-- data is a path prefix: data-X.npy and data-y.npy are made there (by each
-- host's first rank, the same numbers on every host and backend) when
-- they are not there yet; the default is in $TMPDIR. Rank 0 prints the loss of each
-- step and, with weights.npy, saves the final weights there.
local cuda, kernels, batch, dist = require("cuda"), require("kernels"), require("batch"), require("dist")

local features, rows = 16, 64 -- each batch is rows × features
local perStep = 4 -- batches a step, shared by the ranks
local steps = tonumber(arg[1]) or 25
local lr = 4.0
local n = steps * perStep * rows

local prefix = arg[2] or ((os.getenv("TMPDIR") or "/tmp") .. ("/glua-dist-train-%dx%d"):format(n, features))
local rank, size = dist.rank(), dist.size()
assert(perStep % size == 0, ("dist_train.lua: the %d batches of a step cannot be shared by %d ranks"):format(perStep, size))

-- The data: X uniform in [-0.5, 0.5), y = X·w_true + a little noise.
-- Written under a temporary name and renamed, so that a rank of another
-- host writing the same file never shows a reader half of one.
local function exists(path)
	local f = io.open(path)
	if f then f:close() end
	return f ~= nil
end
local xPath, yPath = prefix .. "-X.npy", prefix .. "-y.npy"
if dist.local_rank() == 0 and not (exists(xPath) and exists(yPath)) then
	local X = kernels.add_scalar(cuda.rand({ n, features }, "float32", 1), -0.5)
	local wTrue = kernels.add_scalar(cuda.rand({ features }, "float32", 2), -0.5)
	local y = kernels.matmul(cuda.zeros({ n }), X, wTrue)
	kernels.axpy(y, 0.01, kernels.add_scalar(cuda.rand({ n }, "float32", 3), -0.5))
	local tmp = ("%s.%d.tmp"):format(prefix, rank)
	X:save_npy(tmp .. "-X.npy")
	y:save_npy(tmp .. "-y.npy")
	assert(os.rename(tmp .. "-X.npy", xPath))
	assert(os.rename(tmp .. "-y.npy", yPath))
end
dist.barrier()

-- Every batch, as views of the memory-mapped files: batch.iter deals them
-- out, batch i to rank (i-1) % size, and uploads only this rank's.
local X = cuda.load_npy(xPath, { mmap = true })
local y = cuda.load_npy(yPath, { mmap = true })
local xs, ys = batch.chunks(X, rows), batch.chunks(y, rows)
local batches = {}
for i = 1, #xs do batches[i] = { xs[i], ys[i] } end

local w = cuda.zeros({ features })
local grad = cuda.zeros({ features })
local residual = cuda.zeros({ rows })
local loss = cuda.zeros({ 1 }, "float64")
local mine = perStep / size -- this rank's batches a step
local sumSquares, k = 0, 0
for _, xb, yb in batch.iter(batches, { shard = true }) do
	-- residual = X·w − y; grad += Xᵀ·residual, the gradient of ½‖X·w − y‖²
	kernels.matmul(residual, xb, w)
	kernels.sub(residual, yb)
	sumSquares = sumSquares + kernels.norm(residual) ^ 2
	kernels.matmul(grad, xb, residual, { trans_a = true, beta = 1 })
	k = k + 1
	if k % mine == 0 then
		dist.all_reduce(grad, "sum")
		kernels.axpy(w, -lr / (perStep * rows), grad)
		kernels.fill(grad, 0)
		kernels.fill(loss, sumSquares)
		dist.all_reduce(loss, "sum")
		if rank == 0 then
			print(("step %d loss %.6g"):format(k / mine, loss[1] / (2 * perStep * rows)))
		end
		sumSquares = 0
	end
end

-- The same weights on every rank: their largest and smallest agree.
local high, low = w:clone(), w:clone()
dist.all_reduce(high, "max")
dist.all_reduce(low, "min")
assert(kernels.max_abs_diff(high, low) == 0, ("rank %d: the ranks' weights differ"):format(rank))
if rank == 0 then
	print(("%d steps on %d rank%s: the weights are identical on every rank"):format(steps, size, size == 1 and "" or "s"))
	if arg[3] then w:save_npy(arg[3]) end
end
