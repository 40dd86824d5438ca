-- Every collective of the dist module, for every dtype and every op,
-- between the real processes of glua --nproc, against what one process
-- computes in plain Lua. Every rank builds its inputs from (rank, seed)
-- alone, so that each rank can also compute every other rank's inputs and
-- so the expected result. A mismatch raises an error naming the case; at
-- the end each rank prints how many checks passed.
--
-- Values: floats are quarters from 0.25 to 3.25, exact in every float
-- dtype; signed integers are -3..4 without 0, so that max, min and avg
-- (which truncates toward zero) meet negative numbers; uint8 is 1..5, so
-- that a product over three ranks (at most 125) does not wrap.
--
-- Tolerances: float32 and float64 are exact for sum, prod, max and min,
-- since with at most three ranks every partial sum and product of quarters
-- is representable, whatever order the ring adds in. avg divides by the
-- number of ranks, one rounding: a relative 2^-23 (float32) and 2^-52
-- (float64). float16 and bfloat16 are rounded back at every step of the
-- ring (as NCCL does), at most three roundings of 2^-11 and 2^-8 each: a
-- relative 2^-9 and 2^-6.
local cuda, dist = require("cuda"), require("dist")

local rank, size = dist.rank(), dist.size()
local n = 7 -- not a multiple of the size: the ring's blocks differ in length

local dtypes = { "float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8" }
local ops = { "sum", "prod", "max", "min", "avg" }
local float = { float32 = true, float64 = true, float16 = true, bfloat16 = true }
local rel = { float32 = 2 ^ -23, float64 = 2 ^ -52, float16 = 2 ^ -9, bfloat16 = 2 ^ -6 }

-- value is rank r's element i (counted from 0) in the case seeded seed.
local function value(dtype, seed, r, i)
	local k = (r * 7 + i * 3 + seed * 5) % 13
	if float[dtype] then return (1 + k) / 4 end
	if dtype == "uint8" then return 1 + k % 5 end
	local v = k % 7 - 3
	if v == 0 then v = 4 end
	return v
end

local function values(dtype, seed, r, count)
	local t = {}
	for i = 0, count - 1 do t[i + 1] = value(dtype, seed, r, i) end
	return t
end

-- reduced is op over the ranks' element i, as one process computes it.
local function reduced(dtype, op, seed, i)
	local acc = value(dtype, seed, 0, i)
	for r = 1, size - 1 do
		local v = value(dtype, seed, r, i)
		if op == "sum" or op == "avg" then acc = acc + v
		elseif op == "prod" then acc = acc * v
		elseif op == "max" then acc = math.max(acc, v)
		elseif op == "min" then acc = math.min(acc, v) end
	end
	if op == "avg" then
		acc = acc / size
		if not float[dtype] then
			acc = acc < 0 and math.ceil(acc) or math.floor(acc)
		end
	end
	return acc
end

local checks = 0

-- check compares x with want(i) for i from 0, exactly unless op is avg
-- on a float dtype or the dtype is a 16-bit float.
local function check(case, dtype, op, x, want)
	local got = x:to_table()
	local tol = 0
	if dtype == "float16" or dtype == "bfloat16" or (op == "avg" and float[dtype]) then tol = rel[dtype] end
	for i = 0, #got - 1 do
		local g, w = got[i + 1], want(i)
		if math.abs(g - w) > tol * math.abs(w) then
			error(("rank %d: %s: element %d is %.17g, want %.17g"):format(rank, case, i + 1, g, w), 0)
		end
	end
	checks = checks + 1
end

local seed = 0
local function case(...)
	seed = seed + 1
	return table.concat({ ... }, " ") .. " (seed " .. seed .. ")", seed
end

for _, dtype in ipairs(dtypes) do
	for _, op in ipairs(ops) do
		local what, s = case("all_reduce", dtype, op)
		local x = cuda.to_device(values(dtype, s, rank, n), dtype)
		dist.all_reduce(x, op)
		check(what, dtype, op, x, function(i) return reduced(dtype, op, s, i) end)

		for root = 0, size - 1 do
			what, s = case("reduce", dtype, op, "root", root)
			x = cuda.to_device(values(dtype, s, rank, n), dtype)
			dist.reduce(x, root, op)
			if rank == root then
				check(what, dtype, op, x, function(i) return reduced(dtype, op, s, i) end)
			else
				check(what, dtype, nil, x, function(i) return value(dtype, s, rank, i) end)
			end
		end

		-- Rank q's slice r of x holds its elements r*n .. r*n+n-1.
		what, s = case("reduce_scatter", dtype, op)
		x = cuda.to_device(values(dtype, s, rank, size * n), dtype)
		local out = cuda.zeros({ n }, dtype)
		dist.reduce_scatter(out, x, op)
		check(what, dtype, op, out, function(i) return reduced(dtype, op, s, rank * n + i) end)
	end

	for root = 0, size - 1 do
		local what, s = case("broadcast", dtype, "root", root)
		local x = cuda.to_device(values(dtype, s, rank, n), dtype)
		dist.broadcast(x, root)
		check(what, dtype, nil, x, function(i) return value(dtype, s, root, i) end)
	end

	local what, s = case("all_gather", dtype)
	local out = cuda.zeros({ size * n }, dtype)
	dist.all_gather(out, cuda.to_device(values(dtype, s, rank, n), dtype))
	check(what, dtype, nil, out, function(i) return value(dtype, s, math.floor(i / n), i % n) end)

	-- Every pair a < b in turn: a sends to b, then b sends to a. The
	-- other ranks wait out the pair; the seed keeps count either way.
	for a = 0, size - 1 do
		for b = a + 1, size - 1 do
			local sa, sb
			what, sa = case("send", dtype, a, "to", b)
			local back
			back, sb = case("send", dtype, b, "to", a)
			if rank == a or rank == b then
				local peer = rank == a and b or a
				local mine = cuda.to_device(values(dtype, rank == a and sa or sb, rank, n), dtype)
				local got = cuda.zeros({ n }, dtype)
				if rank == a then
					dist.send(mine, peer)
					dist.recv(got, peer)
					check(back, dtype, nil, got, function(i) return value(dtype, sb, peer, i) end)
				else
					dist.recv(got, peer)
					dist.send(mine, peer)
					check(what, dtype, nil, got, function(i) return value(dtype, sa, peer, i) end)
				end
			end
		end
	end
end

dist.barrier()
checks = checks + 1
print(("rank %d: %d checks passed"):format(rank, checks))
