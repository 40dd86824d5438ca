-- Each rank walks its share of seven batches (a list, then a stream) and
-- of the chunks of a host array, printing what it got; together the ranks
-- must see every batch and every row once.
local batch, cuda, kernels, dist = require("batch"), require("cuda"), require("kernels"), require("dist")

local list = {}
for i = 1, 7 do list[i] = { { i, 10 * i } } end
local seen = {}
for i, x in batch.iter(list, { shard = true }) do
  seen[#seen + 1] = i .. "=" .. kernels.sum(x)
end
print("list " .. table.concat(seen, " "))

local k = 0
local function stream()
  k = k + 1
  if k <= 7 then return list[k] end
end
seen = {}
for i, x in batch.iter(stream, { shard = true }) do
  seen[#seen + 1] = i .. "=" .. kernels.sum(x)
end
print("stream " .. table.concat(seen, " "))

local h = cuda.host_array({ 10, 2 })
for r = 1, 10 do h[r][1], h[r][2] = r, 0 end
seen = {}
for _, c in ipairs(batch.chunks(h, 3, { shard = true })) do
  local rows = {}
  for r = 1, c.shape[1] do rows[#rows + 1] = c[r][1] end
  seen[#seen + 1] = table.concat(rows, ",")
end
print("chunks " .. table.concat(seen, " "))
print("ranks " .. dist.size())
