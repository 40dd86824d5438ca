-- The main job: repeated matrix products on the device, written three ways,
-- to show what each costs in time, allocations and pool memory.
--
--   glua scripts/matmul.lua [n] [iterations] [dtype]
--
-- (a) naive:        upload A and B and allocate C inside the loop, every time;
-- (b) preallocated: device arrays made once, new data uploaded into them with
--                   copy_from, results downloaded into one host array;
-- (c) in place:     the products accumulated on the device, C += A·B (beta = 1),
--                   downloaded once at the end.
local cuda = require("cuda")
local kernels = require("kernels")
local pool = require("pool")

local n = math.floor(tonumber(arg[1]) or 384)
local iters = math.floor(tonumber(arg[2]) or 10)
local dtype = arg[3] or "float32"
assert(n >= 1 and iters >= 1, "usage: glua scripts/matmul.lua [n >= 1] [iterations >= 1] [dtype]")

local function size(bytes)
  local units = { "B", "KiB", "MiB", "GiB", "TiB" }
  local i = 1
  while bytes >= 1024 and i < #units do
    bytes, i = bytes / 1024, i + 1
  end
  return string.format(i == 1 and "%d %s" or "%.1f %s", bytes, units[i])
end

-- One product first: on a GPU, cuBLAS keeps a workspace from its first
-- product on (pool.status() lists it), which would otherwise count as the
-- first pattern's allocation and peak.
do
  local W = cuda.rand({ 8, 8 }, dtype, 1)
  kernels.matmul(cuda.device_array({ 8, 8 }, dtype), W, W)
  cuda.synchronize()
end

-- Input data lives on the host, as it would when read from disk: two pairs of
-- random matrices, used in turn.
local inputs = {}
for k = 1, 2 do
  local A, B = cuda.rand({ n, n }, dtype, 2 * k), cuda.rand({ n, n }, dtype, 2 * k + 1)
  inputs[k] = { A = A:copy_to_host(), B = B:copy_to_host() }
  A:free()
  B:free()
end
local function input(i) return inputs[(i - 1) % 2 + 1] end

-- measure runs setup() and then body(state, i) for every iteration, and reports
-- the loop's time, the allocations made, and the most pool memory the pattern
-- held at once (its setup included) beyond what was in use before it began.
local function measure(label, setup, body)
  collectgarbage()            -- let the previous pattern's dropped arrays go back
  cuda.synchronize()
  pool.reset_peak()
  local s0 = pool.stats()
  local state = setup()
  cuda.synchronize()
  local t0 = os.clock()
  for i = 1, iters do body(state, i) end
  cuda.synchronize()
  local elapsed = os.clock() - t0
  local s = pool.stats()
  local gflops = 2 * n * n * n * iters / elapsed / 1e9
  print(string.format("%-14s %10.3f %10.1f %12d %16s", label, 1000 * elapsed / iters, gflops,
    s.allocations - s0.allocations, size(s.peak_used - s0.used)))
  return state
end

print(string.format("matmul %dx%d %s, %d iterations, %s backend (%s)", n, n, dtype, iters,
  cuda.backend(), cuda.device().name))
print(string.format("%-14s %10s %10s %12s %16s", "pattern", "ms/iter", "GFLOP/s", "allocations", "peak pool memory"))

-- (a) naive: three allocations per iteration, and memory that is released
-- only when the garbage collector gets to it.
local naive = measure("naive", function() return {} end, function(st, i)
  local A = cuda.to_device(input(i).A)
  local B = cuda.to_device(input(i).B)
  local C = cuda.device_array({ n, n }, dtype)
  kernels.matmul(C, A, B)
  st.last = C:copy_to_host()
end)

-- (b) preallocated: the same work with no allocation in the loop.
local function buffers()
  return {
    A = cuda.device_array({ n, n }, dtype),
    B = cuda.device_array({ n, n }, dtype),
    C = cuda.device_array({ n, n }, dtype),
    result = cuda.host_array({ n, n }, dtype),
  }
end
local pre = measure("preallocated", buffers, function(st, i)
  st.A:copy_from(input(i).A)
  st.B:copy_from(input(i).B)
  kernels.matmul(st.C, st.A, st.B)
  st.C:copy_to_host(st.result)
end)

-- (c) in place: accumulate C += A·B on the device, download once.
local acc = measure("in place", function()
  local st = buffers()
  kernels.fill(st.C, 0)
  return st
end, function(st, i)
  st.A:copy_from(input(i).A)
  st.B:copy_from(input(i).B)
  kernels.matmul(st.C, st.A, st.B, { beta = 1 })
end)
acc.C:copy_to_host(acc.result)

-- Check the answers: (a) and (b) computed the same last product, and (c)
-- equals the products summed one at a time.
local A, B = pre.A, pre.B
local diff_ab = kernels.max_abs_diff(pre.C, cuda.to_device(naive.last))
local P = cuda.device_array({ n, n }, dtype)
local sum = cuda.zeros({ n, n }, dtype)
for i = 1, iters do
  A:copy_from(input(i).A)
  B:copy_from(input(i).B)
  kernels.matmul(P, A, B)
  kernels.add(sum, P)
end
local rel_c = kernels.max_abs_diff(acc.C, sum) / kernels.norm(sum) * math.sqrt(n * n)
local tol = ({ float32 = 1e-4, float64 = 1e-10 })[dtype] or 2e-2
print(string.format("check: naive vs preallocated max |diff| %.3g; in place vs summed products within %g: %s",
  diff_ab, tol, tostring(rel_c < tol)))
assert(diff_ab == 0, "naive and preallocated products differ")
assert(rel_c < tol, "in-place accumulation disagrees with the summed products")
print(pool.status())
