-- kernels.matmul against a plain Lua product, for every float dtype,
-- transposes, alpha and beta, and tf32.
local cuda = require("cuda")
local kernels = require("kernels")

local ref = check.matmul

local seed = 1
local function case(dt, m, k, n, o)
  seed = seed + 3
  local ashape = o.trans_a and { k, m } or { m, k }
  local bshape = o.trans_b and { n, k } or { k, n }
  local A = cuda.rand(ashape, dt, seed)
  local B = cuda.rand(bshape, dt, seed + 1)
  local C = cuda.rand({ m, n }, dt, seed + 2)
  local want = cuda.to_device(ref(A:to_table(), B:to_table(), C:to_table(), o), dt)
  kernels.matmul(C, A, B, o)
  local rel = check.rel(C, want)
  local tol = o.precision == "tf32" and tolerance.tf32 or tolerance[dt]
  if not (rel < tol) then
    error(string.format("%s %dx%dx%d %s: relative error %g over %g", dt, m, k, n,
      (o.trans_a and "Aᵀ" or "A") .. (o.trans_b and "Bᵀ" or "B"), rel, tol))
  end
end

for _, dt in ipairs({ "float32", "float64", "float16", "bfloat16" }) do
  for _, ta in ipairs({ false, true }) do
    for _, tb in ipairs({ false, true }) do
      case(dt, 17, 33, 9, { trans_a = ta, trans_b = tb })
      case(dt, 8, 64, 12, { trans_a = ta, trans_b = tb, alpha = 0.5, beta = 2 })
    end
  end
end
case("float32", 64, 128, 32, { precision = "tf32" })
case("float32", 1, 1, 1, {})
case("float32", 40, 1, 30, { beta = 1 })

-- matrix-vector: a 1-D x on the right is a column and y = op(M)·x; on the
-- left it is a row and y = x·op(M)
local function column(v)
  local t = {}
  for i, e in ipairs(v) do t[i] = { e } end
  return t
end
local function gemv(dt, m, k, o, left)
  seed = seed + 3
  local stored = { m, k } -- M as stored: op(M) is m×k on the right, k×m on the left
  if (left and not o.trans_b) or o.trans_a then stored = { k, m } end
  local M = cuda.rand(stored, dt, seed)
  local x = cuda.rand(k, dt, seed + 1)
  local y = cuda.rand(m, dt, seed + 2)
  local want
  if left then
    want = ref({ x:to_table() }, M:to_table(), { y:to_table() }, o)[1]
    check.eq(kernels.matmul(y, x, M, o), y, "matmul returns y")
  else
    want = {}
    for i, row in ipairs(ref(M:to_table(), column(x:to_table()), column(y:to_table()), o)) do want[i] = row[1] end
    kernels.matmul(y, M, x, o)
  end
  local rel = check.rel(y, cuda.to_device(want, dt))
  if not (rel < tolerance[dt]) then
    error(string.format("%s gemv %dx%d %s: relative error %g", dt, m, k, left and "x·M" or "M·x", rel))
  end
end
for _, dt in ipairs({ "float32", "float64", "float16", "bfloat16" }) do
  for _, t in ipairs({ false, true }) do
    gemv(dt, 37, 53, { trans_a = t })
    gemv(dt, 29, 64, { trans_b = t }, true)
    gemv(dt, 16, 8, { trans_a = t, alpha = -1.5, beta = 0.5 })
    gemv(dt, 8, 16, { trans_b = t, alpha = 2, beta = 1 }, true)
  end
end
gemv("float32", 1, 1, {})
gemv("float32", 64, 1, {}, true)

-- beta = 1 accumulates in place
local A = cuda.ones({ 2, 3 })
local B = cuda.ones({ 3, 4 })
local C = cuda.zeros({ 2, 4 })
for _ = 1, 5 do kernels.matmul(C, A, B, { beta = 1 }) end
check.eq(C:to_table()[2][4], 15, "accumulated")
check.eq(kernels.matmul(C, A, B), C, "matmul returns C")
check.eq(C:to_table()[1][1], 3, "beta defaults to 0")

-- an empty inner dimension leaves beta*C
local E = cuda.full({ 2, 2 }, 4)
kernels.matmul(E, cuda.zeros({ 2, 0 }), cuda.zeros({ 0, 2 }), { beta = 0.5 })
check.eq(E:to_table()[2][2], 2, "k = 0 scales C by beta")

-- row views are valid operands
local big = cuda.rand({ 6, 4 }, "float64", 99)
local top = big:rows(1, 2)
local Cv = cuda.zeros({ 2, 2 }, "float64")
kernels.matmul(Cv, top, cuda.ones({ 4, 2 }, "float64"))
local t = top:to_table()
check.near(Cv:to_table()[2][1], t[2][1] + t[2][2] + t[2][3] + t[2][4], 1e-12, "matmul on a view")
