-- Indices out of bounds name the kernel's array, the index and the shape,
-- on the CPU always and on the GPU with check_bounds. One thread fails in
-- each, so the GPU's first failure is the CPU's.
local cuda, kernels = require("cuda"), require("kernels")

local caller = cuda.zeros({ 4, 5 }, "float32")
local past = kernels.jit(function(m, n)
  local i, j = kernels.grid(2)
  if i == 4 and j == 5 then m[i + n][j] = 1 end
end, { check_bounds = true })
try("2-D row", past.launch, past, { grid = { 1, 1 }, block = { 4, 5 } }, caller, 2)
try("a view", past.launch, past, { grid = { 1, 1 }, block = { 4, 5 } }, caller:rows(2, 3), 0)

local tile = kernels.jit(function(x)
  local s = kernels.shared(32, "float32")
  local i = kernels.grid(1)
  if i == 32 then s[i + 1] = 1 end
  x[i] = s[1]
end, { check_bounds = true })
try("shared", tile.launch, tile, { grid = 1, block = 32 }, cuda.zeros(32, "float32"))

local modulo = kernels.jit(function(x, n)
  local i = kernels.grid(1)
  if i <= #x then x[i] = i % n end
end)
try("modulo by zero", modulo.launch, modulo, { grid = 1, block = 32 }, cuda.zeros(32, "int32"), 0)
