-- A memory-mapped .npy truncated underneath (here by io.open's "w", as
-- another program might): every call that reads or writes its bytes is
-- an error naming the file, never the end of the process, and the
-- runtime goes on working.
local cuda = require("cuda")
local kernels = require("kernels")
local batch = require("batch")

local function truncate(path)
  assert(io.open(path, "w")):close()
end

-- expect checks that fn fails with a message naming path and the cause.
local function expect(path, fn, ...)
  local err = check.error(path, fn, ...)
  if not string.find(err, "truncated by another program", 1, true) then
    error("the message does not say why: " .. err, 2)
  end
  if string.find(err, "runtime error", 1, true) or string.find(err, "goroutine", 1, true) then
    error("the message carries Go's panic text: " .. err, 2)
  end
end

-- small (one piece) and large (past the size from which copies are
-- staged through pinned slots)
for _, n in ipairs({ 16, 3 * 2 ^ 20 }) do
  local path = tmpdir .. "/cut_" .. n .. ".npy"
  local w = cuda.create_npy(path, { n / 4, 4 })
  w:reshape(-1)[n] = 7
  w:flush()
  local r = cuda.load_npy(path, { mmap = true })
  check.eq(r:reshape(-1)[n], 7, "the mapped file before truncation")
  local d = cuda.zeros({ n / 4, 4 })
  truncate(path)

  expect(path, function() return r[1][1] end)
  expect(path, function() return r:reshape(-1)[n] end)
  expect(path, tostring, r)
  expect(path, function() return r:to_table() end)
  expect(path, cuda.to_device, r)
  expect(path, cuda.to_device, r, "float64")
  expect(path, function() d:copy_from(r) end)
  expect(path, function() return r + 1 end)
  expect(path, function() return -r end)
  expect(path, function() r:save_npy(tmpdir .. "/copy.npy") end)
  expect(path, function()
    for _, x in batch.iter(batch.chunks(r, n / 8)) do end
  end)
  -- writes into the writable mapping of the same file
  expect(path, function() w[1][1] = 1 end)
  expect(path, function() d:copy_to_host(w) end)

  -- the runtime is whole: the device array kept its zeros, and new work runs
  check.eq(kernels.sum(d), 0, "the device array after the failed copies")
  local x = cuda.to_device({ 1, 2, 3 })
  check.eq(kernels.sum(x), 6, "a new array after the faults")
  d:free()
  x:free()
end

-- batch.matmul writing its product into a created file cut underneath
local out = tmpdir .. "/product.npy"
local C = cuda.create_npy(out, { 64, 64 })
truncate(out)
local A, B = cuda.host_array({ 64, 32 }), cuda.host_array({ 32, 64 })
expect(out, batch.matmul, A, B, { out = C })
expect(out, function() return C[1][1] end)

-- the same by tiles, under a budget: C's tiles scattered into a cut out,
-- and A's and B's panels gathered from a cut input
local n = 256
local X = cuda.rand({ n, n }, "float32", 3):copy_to_host()
local tiled = tmpdir .. "/tiled.npy"
local T = cuda.create_npy(tiled, { n, n })
truncate(tiled)
expect(tiled, batch.matmul, X, X, { out = T, budget = "256KiB" })
local input = tmpdir .. "/input.npy"
X:save_npy(input)
local M = cuda.load_npy(input, { mmap = true })
truncate(input)
expect(input, batch.matmul, M, X, { budget = "256KiB" })
expect(input, batch.matmul, X, M, { budget = "256KiB" })
local P = batch.matmul(X, X, { budget = "256KiB" })
check.eq(P.shape[1], n, "a product by tiles after the faults")
