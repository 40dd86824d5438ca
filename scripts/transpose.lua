-- A block-tiled transpose: each block reads a TILE×TILE tile of A along
-- its rows into shared memory and writes it out along the rows of the
-- result, so both the reads and the writes of a warp are contiguous. The
-- tile has one column of padding, so that reading a column of it does not
-- make every thread of a warp hit the same shared-memory bank.
--
--   glua scripts/transpose.lua [rows] [cols]
local cuda = require("cuda")
local kernels = require("kernels")

local cpu = cuda.backend() == "cpu"
local rows = math.floor(tonumber(arg[1]) or (cpu and 75 or 4096))
local cols = math.floor(tonumber(arg[2]) or (cpu and 50 or 3000))
assert(rows >= 1 and cols >= 1, "usage: glua scripts/transpose.lua [rows >= 1] [cols >= 1]")

local TILE = 32

local transpose = kernels.jit(function(A, T)
  local tile = kernels.shared({ TILE, TILE + 1 }, "float32")
  local tx, ty = kernels.threadIdx.x, kernels.threadIdx.y
  local bx, by = kernels.blockIdx.x, kernels.blockIdx.y
  -- block (bx, by) reads A's tile at row block by, column block bx
  local row, col = (by - 1) * TILE + ty, (bx - 1) * TILE + tx
  if row <= A.shape[1] and col <= A.shape[2] then
    tile[ty][tx] = A[row][col]
  end
  kernels.syncthreads()
  -- and writes it as T's tile at row block bx, column block by
  row, col = (bx - 1) * TILE + ty, (by - 1) * TILE + tx
  if row <= T.shape[1] and col <= T.shape[2] then
    T[row][col] = tile[tx][ty]
  end
end, { name = "transpose" })

local A = cuda.rand({ rows, cols }, "float32", 3)
local T = cuda.zeros({ cols, rows }, "float32")
local launch = { grid = { math.ceil(cols / TILE), math.ceil(rows / TILE) }, block = { TILE, TILE } }
transpose:launch(launch, A, T)

-- T·I == Aᵀ exactly, element by element: compare T with A read by columns
local a, t = A:copy_to_host(), T:copy_to_host()
local wrong = 0
for i = 1, rows, math.max(1, math.floor(rows / 97)) do
  for j = 1, cols do
    if t[j][i] ~= a[i][j] then wrong = wrong + 1 end
  end
end
print(string.format("transpose %dx%d: %d wrong elements in the rows checked", rows, cols, wrong))
assert(wrong == 0, "the transpose is wrong")

local s = cuda.timer(function() transpose:launch(launch, A, T) end)
print(string.format("  transpose %.3f ms, %.1f GB/s (each element read and written once)", s * 1e3, 2 * 4 * rows * cols / s / 1e9))
