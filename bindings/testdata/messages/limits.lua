-- Launches beyond the device's limits, and shared arrays past 48 KiB.
local cuda, kernels = require("cuda"), require("kernels")

local x = cuda.zeros(64, "float32")
local ones = kernels.jit(function(x)
  local i = kernels.grid(1)
  if i <= #x then x[i] = 1 end
end)
try("block 2048", ones.launch, ones, { grid = 1, block = 2048 }, x)
try("block z 65", ones.launch, ones, { grid = 1, block = { 1, 1, 65 } }, x)
try("block 32x32x2", ones.launch, ones, { grid = 1, block = { 32, 32, 2 } }, x)
try("grid y 65536", ones.launch, ones, { grid = { 1, 65536 }, block = 32 }, x)
try("grid x 2^31", ones.launch, ones, { grid = 2 ^ 31, block = 32 }, x)
try("dynamic shared 300000", ones.launch, ones, { grid = 1, block = 32, shared = 300000 }, x)
try("block 1024", ones.launch, ones, { grid = 1, block = 1024 }, x)
say("sum", kernels.sum(x))

-- a shared array of literal size too large for a block is refused by kernels.jit
try("shared 800000", kernels.jit, function(x)
  local s = kernels.shared(200000, "float32")
end)
-- arrays that fit one by one but not together, or sized by a captured
-- number, at the launch that compiles them
local N = 8192
local big = kernels.jit(function(x)
  local s = kernels.shared(N, "float32")
  local t = kernels.shared(N, "float32")
  local i = kernels.grid(1)
  s[(i - 1) % 32 + 1] = 2
  t[(i - 1) % 32 + 1] = 1
  if i <= #x then x[i] = s[(i - 1) % 32 + 1] + t[(i - 1) % 32 + 1] end
end)
try("shared 2 x 32768", big.launch, big, { grid = 1, block = 32 }, x)
