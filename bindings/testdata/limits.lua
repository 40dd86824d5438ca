-- Launch limits: every backend refuses what an NVIDIA GPU refuses, with the
-- same message (the CPU backend applies the limits of the GPU present, or
-- of an H100; these are the same on every GPU glua supports).
local cuda, kernels = require("cuda"), require("kernels")

local x = cuda.zeros(64, "float32")
local ones = kernels.jit(function(x)
  local i = kernels.grid(1)
  if i <= #x then x[i] = 1 end
end)

check.error("Kernel:launch: block.x = 2048 exceeds the device's limit of 1024 (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)",
  ones.launch, ones, { grid = 1, block = 2048 }, x)
check.error("Kernel:launch: block.z = 65 exceeds the device's limit of 64 (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)",
  ones.launch, ones, { grid = 1, block = { 1, 1, 65 } }, x)
check.error("Kernel:launch: a block of 32×32×2 = 2048 threads exceeds the device's limit of 1024 threads per block (CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)",
  ones.launch, ones, { grid = 1, block = { 32, 32, 2 } }, x)
check.error("Kernel:launch: grid.y = 65536 exceeds the device's limit of 65535 (CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)",
  ones.launch, ones, { grid = { 1, 65536 }, block = 32 }, x)
check.error("Kernel:launch: 300000 bytes of dynamic shared memory plus 0 static exceed the device's limit of",
  ones.launch, ones, { grid = 1, block = 32, shared = 300000 }, x)
check.eq(kernels.sum(x), 0, "nothing ran")

-- the largest block runs
ones:launch({ grid = 1, block = 1024 }, x)
check.eq(kernels.sum(x), 64, "a block of 1024 threads")

-- shared arrays up to 48 KiB run (past it, see messages/limits.lua)
local fits = kernels.jit(function(x)
  local s = kernels.shared(6000, "float64")
  local i = kernels.grid(1)
  local t = (i - 1) % 32 + 1
  s[t] = 2
  if i <= #x then x[i] = s[t] end
end)
fits:launch({ grid = 2, block = 32 }, x)
check.eq(kernels.sum(x), 128, "48000 bytes of shared arrays")
