-- kernels.matmul on 3-D arrays, a batch of products C[i] = op(A[i])·op(B[i]),
-- against a plain Lua product for every float dtype, with transposes,
-- alpha and beta, tf32, and a 2-D operand shared by every product; its
-- errors name the shapes.
local cuda = require("cuda")
local kernels = require("kernels")

local ref = check.matmul -- one product

local seed = 100
-- case multiplies a batch of `batch` products, A shared when a_shared
-- (then 2-D), B shared when b_shared.
local function case(dt, batch, m, k, n, o, a_shared, b_shared)
  seed = seed + 3
  local ashape = o.trans_a and { k, m } or { m, k }
  local bshape = o.trans_b and { n, k } or { k, n }
  if not a_shared then table.insert(ashape, 1, batch) end
  if not b_shared then table.insert(bshape, 1, batch) end
  local A = cuda.rand(ashape, dt, seed)
  local B = cuda.rand(bshape, dt, seed + 1)
  local C = cuda.rand({ batch, m, n }, dt, seed + 2)
  local tA, tB, tC = A:to_table(), B:to_table(), C:to_table()
  local want = {}
  for i = 1, batch do
    want[i] = ref(a_shared and tA or tA[i], b_shared and tB or tB[i], tC[i], o)
  end
  want = cuda.to_device(want, dt)
  check.eq(kernels.matmul(C, A, B, o), C, "matmul returns C")
  local rel = check.rel(C, want)
  local tol = o.precision == "tf32" and tolerance.tf32 or tolerance[dt]
  if not (rel < tol) then
    error(string.format("%s batch %d of %dx%dx%d %s%s%s: relative error %g over %g", dt, batch, m, k, n,
      (o.trans_a and "Aᵀ" or "A") .. (o.trans_b and "Bᵀ" or "B"),
      a_shared and " A shared" or "", b_shared and " B shared" or "", rel, tol), 2)
  end
  -- each product is the 2-D matmul of its own matrices
  if batch >= 2 then
    local Ai = a_shared and A or A:rows(2, 2):reshape(o.trans_a and { k, m } or { m, k })
    local Bi = b_shared and B or B:rows(2, 2):reshape(o.trans_b and { n, k } or { k, n })
    local Ci = cuda.to_device(tC[2], dt)
    kernels.matmul(Ci, Ai, Bi, o)
    -- cuBLAS may pick other kernels for one product than for a batch
    local r2 = check.rel(C:rows(2, 2):reshape({ m, n }), Ci)
    if not (r2 < tol) then error(string.format("%s: product 2 differs from the 2-D matmul by %g", dt, r2), 2) end
  end
end

for _, dt in ipairs({ "float32", "float64", "float16", "bfloat16" }) do
  for _, ta in ipairs({ false, true }) do
    for _, tb in ipairs({ false, true }) do
      case(dt, 3, 5, 7, 4, { trans_a = ta, trans_b = tb })
      case(dt, 4, 6, 9, 3, { trans_a = ta, trans_b = tb, alpha = 0.5, beta = 2 })
      case(dt, 3, 4, 5, 6, { trans_a = ta, trans_b = tb, beta = 1 }, true, false)
      case(dt, 3, 4, 5, 6, { trans_a = ta, trans_b = tb, alpha = -1 }, false, true)
    end
  end
end
case("float32", 5, 32, 64, 16, { precision = "tf32" })

-- a 3-D operand of one matrix is shared as a 2-D one is (NumPy's broadcast)
do
  local A1, Bs, Cs = cuda.rand({ 1, 4, 3 }, "float64", 7), cuda.rand({ 5, 3, 2 }, "float64", 8), cuda.zeros({ 5, 4, 2 }, "float64")
  local A2 = A1:reshape({ 4, 3 })
  local want = cuda.zeros({ 5, 4, 2 }, "float64")
  kernels.matmul(want, A2, Bs)
  kernels.matmul(Cs, A1, Bs)
  check.eq(kernels.max_abs_diff(Cs, want), 0, "A of one matrix against the same A 2-D")
  check.error("C is 1x4x2, A is 1x4x3 and B is 5x3x2; B holds 5 matrices but C holds 1", kernels.matmul, cuda.zeros({ 1, 4, 2 }, "float64"), A1, Bs)
end
case("float32", 1, 3, 3, 3, {})
case("float32", 2, 1, 1, 1, { beta = 1 })

-- empty batches and empty sums
local E = cuda.zeros({ 0, 2, 2 })
check.eq(kernels.matmul(E, cuda.zeros({ 0, 2, 3 }), cuda.zeros({ 0, 3, 2 })), E, "an empty batch")
local C = cuda.full({ 2, 2, 2 }, 3)
kernels.matmul(C, cuda.zeros({ 2, 2, 0 }), cuda.zeros({ 2, 0, 2 }), { beta = 2 })
check.eq(kernels.sum(C), 48, "an empty sum scales C by beta")

-- errors name the shapes, and nothing is written
local A, B = cuda.ones({ 3, 4, 5 }), cuda.ones({ 3, 5, 6 })
C = cuda.full({ 3, 4, 6 }, 7)
check.error("A holds 3 matrices but C holds 2", kernels.matmul, cuda.zeros({ 2, 4, 6 }), A, B)
check.error("B holds 2 matrices but C holds 3", kernels.matmul, C, A, cuda.ones({ 2, 5, 6 }))
check.error("A[i] is 4x5 but B[i] is 6x5; inner dimensions 5 and 6 differ", kernels.matmul, C, A, cuda.ones({ 3, 6, 5 }))
check.error("C[i] is 4x7 but A[i]·B is 4x6", kernels.matmul, cuda.zeros({ 3, 4, 7 }), A, cuda.ones({ 5, 6 }))
check.error("C must be 3-D (batch x rows x columns) when A or B is", kernels.matmul, cuda.zeros({ 4, 6 }), A, B)
check.error("a 3-D C needs A or B 3-D", kernels.matmul, C, cuda.ones({ 4, 5 }), cuda.ones({ 5, 6 }))
check.error("a batch of products needs matrices on both sides", kernels.matmul, C, A, cuda.ones({ 5 }))
check.error("dtypes must match", kernels.matmul, C, A, cuda.ones({ 3, 5, 6 }, "float64"))
check.error("matmul supports float32, float64, float16 and bfloat16", kernels.matmul,
  cuda.zeros({ 3, 4, 6 }, "int32"), cuda.ones({ 3, 4, 5 }, "int32"), cuda.ones({ 3, 5, 6 }, "int32"))
check.error("3-D batches of matrices", kernels.matmul, C, cuda.ones({ 1, 3, 4, 5 }), B)
check.error("C shares memory with an input", kernels.matmul, C, C, cuda.ones({ 3, 6, 6 }))
check.eq(kernels.sum(C), 7 * 72, "C after the refused products")
