-- The kernel language's structure as Numba's users know it: CUDA's index
-- names, shared arrays of 2 and 3 dimensions, local arrays, numbers and
-- functions captured from the script, types unified over assignments and
-- multiple assignment into elements. Each kernel runs on fresh random data
-- and is compared with the same computation in plain Lua, so the GPU and
-- the CPU evaluator are held to one answer.
local cuda = require("cuda")
local kernels = require("kernels")

local function flat(t, out)
  out = out or {}
  for _, v in ipairs(t) do
    if type(v) == "table" then flat(v, out) else out[#out + 1] = v end
  end
  return out
end

local function same(got, want, tol, what)
  local g, w = flat(got), flat(want)
  check.eq(#g, #w, what .. ": element count")
  for i = 1, #w do
    check.near(g[i], w[i], tol, what .. " element " .. i)
  end
end

-- 1. threadIdx and blockIdx count from 1: grid(1) == (blockIdx.x - 1) * blockDim.x + threadIdx.x
local indices = kernels.jit(function(out, dims)
  local i, j = kernels.grid(2)
  local n = kernels.gridsize(1)
  local k = (j - 1) * n + i
  if k <= #out then
    out[k] = (kernels.blockIdx.x - 1) * kernels.blockDim.x + kernels.threadIdx.x - i
      + 1000 * ((kernels.blockIdx.y - 1) * kernels.blockDim.y + kernels.threadIdx.y - j)
    dims[k] = kernels.blockDim.x * 1000000 + kernels.blockDim.y * 10000 + kernels.gridDim.x * 100 + kernels.gridDim.y
  end
end)
local out, dims = cuda.full(15 * 12, -1, "int64"), cuda.zeros(15 * 12, "int64")
indices:launch({ grid = { 3, 4 }, block = { 5, 3 } }, out, dims)
local zeros, dimsWant = {}, {}
for k = 1, 15 * 12 do zeros[k], dimsWant[k] = 0, 5 * 1000000 + 3 * 10000 + 3 * 100 + 4 end
same(out:to_table(), zeros, 0, "blockIdx and threadIdx against kernels.grid")
same(dims:to_table(), dimsWant, 0, "blockDim and gridDim")

-- 2. a 3-D shared array and a 2-D one, filled by one thread each and read by another after the barrier
local shared3 = kernels.jit(function(out)
  local s = kernels.shared({ 2, 3, 4 }, "float64")
  local t = kernels.shared({ 4, 6 }, "int32")
  local x, y, z = kernels.threadIdx.x, kernels.threadIdx.y, kernels.threadIdx.z
  s[z][y][x] = x + 10 * y + 100 * z
  t[x][(z - 1) * 3 + y] = x * y * z
  kernels.syncthreads()
  -- each thread reads the element of the thread mirrored in every dimension
  local mx, my, mz = 5 - x, 4 - y, 3 - z
  local k = ((z - 1) * 3 + (y - 1)) * 4 + x
  out[k] = s[mz][my][mx] + t[mx][(mz - 1) * 3 + my] / 1000
end)
local o3 = cuda.zeros(24, "float64")
shared3:launch({ grid = 1, block = { 4, 3, 2 } }, o3)
local want3 = {}
for z = 1, 2 do for y = 1, 3 do for x = 1, 4 do
  local mx, my, mz = 5 - x, 4 - y, 3 - z
  want3[((z - 1) * 3 + (y - 1)) * 4 + x] = mx + 10 * my + 100 * mz + mx * my * mz / 1000
end end end
same(o3:to_table(), want3, 1e-15, "3-D and 2-D shared arrays")

-- 3. local arrays, 1-D and 2-D, one per thread: each thread reverses its row
local reverse = kernels.jit(function(m, out)
  local i = kernels.grid(1)
  if i <= m.shape[1] then
    local a = kernels.local_array(5, "float32")
    local b = kernels.local_array({ 2, 5 }, "int64")
    for j = 1, 5 do
      a[j] = m[i][j]
      b[1][j], b[2][j] = j, 6 - j
    end
    for j = 1, 5 do
      out[i][j] = a[b[2][j]] * b[1][j]
    end
  end
end)
local m = cuda.rand({ 37, 5 }, "float32", 11)
local rev = cuda.zeros({ 37, 5 }, "float32")
reverse:launch({ grid = 3, block = 16 }, m, rev)
local mt, wantRev = m:to_table(), {}
for i = 1, 37 do
  wantRev[i] = {}
  for j = 1, 5 do wantRev[i][j] = mt[i][6 - j] * j end
end
same(rev:to_table(), wantRev, 1e-6, "local arrays")

-- 4. numbers captured from the script are constants: shared sizes and loop bounds use them,
-- and a launch after the script changes one compiles another variant
local TPB, SCALE = 8, 0.5
local blockSums = kernels.jit(function(x, sums)
  local s = kernels.shared(TPB, "float32")
  local t = kernels.threadIdx.x
  local i = kernels.grid(1)
  s[t] = 0
  if i <= #x then s[t] = x[i] * SCALE end
  kernels.syncthreads()
  if t == 1 then
    local acc = 0
    for k = 1, TPB do acc = acc + s[k] end
    sums[kernels.blockIdx.x] = acc
  end
end)
local x = cuda.rand(100, "float32", 12)
local xt = x:to_table()
local function blockReference(tpb, scale)
  local want = {}
  for b = 1, math.ceil(100 / tpb) do
    local acc = 0
    for k = (b - 1) * tpb + 1, math.min(b * tpb, 100) do acc = acc + xt[k] * scale end
    want[b] = acc
  end
  return want
end
local sums = cuda.zeros(13, "float32")
blockSums:launch({ grid = 13, block = TPB }, x, sums)
same(sums:to_table(), blockReference(8, 0.5), 1e-5, "block sums with TPB = 8 captured")
TPB, SCALE = 32, 2
local sums32 = cuda.zeros(4, "float32")
blockSums:launch({ grid = 4, block = TPB }, x, sums32)
same(sums32:to_table(), blockReference(32, 2), 1e-5, "block sums after the script set TPB = 32")

-- 5. device functions: several values, calls of other device functions, typed per call signature
local function divmod(a, b)
  local q = math.floor(a / b)
  return q, a - q * b
end
local function clamp(v, lo, hi)
  if v < lo then return lo end
  if v > hi then return hi end
  return v
end
local function digits(n)
  local tens, ones = divmod(n, 10)
  return clamp(tens, 0, 5), ones
end
local devices = kernels.jit(function(n, q, r, c)
  local i = kernels.grid(1)
  if i <= #n then
    q[i], r[i] = digits(n[i])   -- into two arrays at once
    c[i] = clamp(n[i] / 7, 1.5, 9.25)  -- the same function on floats
  end
end)
local nums = cuda.to_device({ 0, 7, 19, 42, 63, 99, 100, 5 }, "int64")
local q, r, c = cuda.zeros(8, "int64"), cuda.zeros(8, "int64"), cuda.zeros(8, "float64")
devices:launch({ grid = 1, block = 8 }, nums, q, r, c)
local wantQ, wantR, wantC = {}, {}, {}
for i, v in ipairs(nums:to_table()) do
  wantQ[i], wantR[i] = math.min(math.floor(v / 10), 5), v % 10
  wantC[i] = math.max(1.5, math.min(v / 7, 9.25))
end
same(q:to_table(), wantQ, 0, "a device function of two values, through another")
same(r:to_table(), wantR, 0, "its second value")
same(c:to_table(), wantC, 1e-15, "the device function typed again for floats")

-- 6. a local's type is the join of what is assigned to it: s starts as an integer
local rowSums = kernels.jit(function(m, out)
  local i = kernels.grid(1)
  if i <= m.shape[1] then
    local s = 0
    for j = 1, m.shape[2] do s = s + m[i][j] end
    out[i] = s
  end
end)
local rs = cuda.zeros(37, "float32")
rowSums:launch({ grid = 3, block = 16 }, m, rs)
local wantRows = {}
for i = 1, 37 do
  local s = 0
  for j = 1, 5 do s = s + mt[i][j] end
  wantRows[i] = s
end
same(rs:to_table(), wantRows, 1e-5, "local s = 0 takes float32 values")

-- 7. multiple assignment into elements: a swap
local flip = kernels.jit(function(v)
  local i = kernels.grid(1)
  local j = #v + 1 - i
  if i < j then v[i], v[j] = v[j], v[i] end
end)
local v = cuda.rand(101, "float32", 13)
local vt = v:to_table()
flip:launch({ grid = 4, block = 32 }, v)
local wantFlip = {}
for i = 1, 101 do wantFlip[i] = vt[102 - i] end
same(v:to_table(), wantFlip, 0, "x[i], x[j] = x[j], x[i]")

-- and math.modf's two values into two arrays at once
local split = kernels.jit(function(v, ip, fp)
  local i = kernels.grid(1)
  if i <= #v then ip[i], fp[i] = math.modf(v[i]) end
end)
local sv = cuda.rand(50, "float64", 14)
kernels.scale(sv, 20)
kernels.add_scalar(sv, -10)
local ip, fp = cuda.zeros(50, "float64"), cuda.zeros(50, "float64")
split:launch({ grid = 1, block = 64 }, sv, ip, fp)
local wantI, wantF = {}, {}
for i, x in ipairs(sv:to_table()) do wantI[i], wantF[i] = math.modf(x) end
same(ip:to_table(), wantI, 0, "b[i], c[i] = math.modf(v): the integer parts")
same(fp:to_table(), wantF, 0, "b[i], c[i] = math.modf(v): the fractions")

-- 8. what can be checked without arguments is refused by kernels.jit itself
check.error("kernels.grid takes the number of dimensions, 1, 2 or 3, as a literal", kernels.jit, function(a)
  local i = kernels.grid(4)
end)
check.error("is 4000000000 bytes, too large for a block", kernels.jit, function(a)
  local s = kernels.shared(1e9, "float32")
end)
check.error("cuda.threadIdx.x is Numba's spelling; in a glua kernel write kernels.threadIdx.x (1-based", kernels.jit, function(a)
  a[cuda.threadIdx.x] = 1
end)
check.error("cuda.syncthreads is Numba's spelling; in a glua kernel write kernels.syncthreads", kernels.jit, function(a)
  cuda.syncthreads()
end)
local notANumber = { 1 }
check.error("the captured local notANumber is a table", kernels.jit, function(a)
  a[1] = notANumber
end)
local function fact(n)
  if n <= 1 then return 1 end
  return n * fact(n - 1)
end
local recursive = kernels.jit(function(a) a[1] = fact(5) end)
check.error("recursion is not allowed in a kernel: fact calls fact", recursive.launch, recursive, { grid = 1, block = 1 }, c)
local later
local uses = kernels.jit(function(a) a[1] = later end)
check.error("the captured local later is nil at the launch", uses.launch, uses, { grid = 1, block = 1 }, c)
later = 3
uses:launch({ grid = 1, block = 1 }, c)
check.eq(c:to_table()[1], 3, "a captured local assigned after kernels.jit, read at the launch")
