-- Kernels written in Lua (kernels.jit): on the CPU backend the evaluator
-- runs them, on the GPU NVRTC compiles their CUDA C; both must agree with
-- the built-in kernels.
local cuda = require("cuda")
local kernels = require("kernels")

-- a vector add with a bounds if
local vadd = kernels.jit(function(a, b, out, n)
  local i = kernels.grid(1)
  if i <= n then
    out[i] = a[i] + b[i]
  end
end, { name = "vadd" })
local n = 1000
local a, b = cuda.rand(n, "float32", 1), cuda.rand(n, "float32", 2)
local out = cuda.zeros(n, "float32")
vadd:launch({ grid = math.ceil(n / 128), block = 128 }, a, b, out, n)
local want = a:clone()
kernels.add(want, b)
check.eq(kernels.max_abs_diff(out, want), 0, "jit vector add equals kernels.add")
-- a second signature (float64) is translated on its own
local a64, b64, out64 = cuda.rand(n, "float64", 3), cuda.rand(n, "float64", 4), cuda.zeros(n, "float64")
vadd:launch({ grid = 8, block = 128 }, a64, b64, out64, n)
local want64 = a64:clone()
kernels.add(want64, b64)
check.eq(kernels.max_abs_diff(out64, want64), 0, "float64 jit vector add equals kernels.add")

-- the naive matmul, as Numba's users write it
local matmul = kernels.jit(function(A, B, C)
  local row, col = kernels.grid(2)
  if row <= C.shape[1] and col <= C.shape[2] then
    local tmp = 0.
    for k = 1, A.shape[2] do
      tmp = tmp + A[row][k] * B[k][col]
    end
    C[row][col] = tmp
  end
end)
local A, B = cuda.rand({ 37, 19 }, "float32", 5), cuda.rand({ 19, 23 }, "float32", 6)
local C, Cref = cuda.zeros({ 37, 23 }, "float32"), cuda.zeros({ 37, 23 }, "float32")
matmul:launch({ grid = { 3, 2 }, block = { 16, 16 } }, A, B, C)
kernels.matmul(Cref, A, B)
check.near(check.rel(C, Cref), 0, tolerance.float32, "jit naive matmul against kernels.matmul")

-- a reduction with atomic_add, over a grid-stride loop
local total = kernels.jit(function(sum, x)
  local i = kernels.grid(1)
  while i <= #x do
    kernels.atomic_add(sum, 1, x[i])
    i = i + kernels.gridsize(1)
  end
end)
local x = cuda.rand(5000, "float64", 7)
local s = cuda.zeros(1, "float64")
total:launch({ grid = 4, block = 64 }, s, x)
check.near(s:to_table()[1], kernels.sum(x), 1e-12, "atomic_add sum against kernels.sum")
local ones, count = cuda.full(777, 1, "int32"), cuda.zeros(1, "int32")
total:launch({ grid = 3, block = 32 }, count, ones)
check.eq(count:to_table()[1], 777, "int32 atomic_add counts exactly")

-- shared memory and syncthreads: a tree sum within each block of 64
local blocksum = kernels.jit(function(out, x)
  local s = kernels.shared(64, "float64")
  local i = kernels.grid(1)
  local lane = (i - 1) % 64 + 1
  s[lane] = 0.0
  if i <= #x then s[lane] = x[i] end
  kernels.syncthreads()
  local w = 32
  while w >= 1 do
    if lane <= w then s[lane] = s[lane] + s[lane + w] end
    kernels.syncthreads()
    w = math.floor(w / 2)
  end
  if lane == 1 then out[math.floor((i - 1) / 64) + 1] = s[1] end
end)
local xs = cuda.rand(1000, "float64", 8)
local sums = cuda.zeros(16, "float64")
blocksum:launch({ grid = 16, block = 64 }, sums, xs)
local xt, st = xs:to_table(), sums:to_table()
for blk = 1, 16 do
  local want = 0
  for i = (blk - 1) * 64 + 1, math.min(1000, blk * 64) do want = want + xt[i] end
  check.near(st[blk], want, 1e-12, "block " .. blk .. " sum")
end

-- check_bounds names the array, the index and the shape (the CPU always checks)
local past = kernels.jit(function(x, n)
  local i = kernels.grid(1)
  x[i + n] = 1
end, { check_bounds = true })
local ten = cuda.zeros(10, "float32")
check.error("index x[11] is out of bounds: x has shape (10)", past.launch, past, { grid = 1, block = 6 }, ten, 5)
-- the runtime is usable afterwards
vadd:launch({ grid = 8, block = 128 }, a, b, out, n)
check.eq(kernels.max_abs_diff(out, want), 0, "launch after a bounds error")

-- an integer expression is int64 wherever it is stored: computed in the
-- store's float type, i * i rounded and these gave 0
local squares = kernels.jit(function(out, i)
  out[1] = (i * i) % 7
  out[2] = (i * i + 1) - i * i
  local v = i * i
  out[3] = math.abs(v - (i - 1) * (i + 1))
  kernels.atomic_add(out, 4, (i * i) % 7)
end)
local sq32, sq64 = cuda.zeros(4, "float32"), cuda.zeros(4, "float64")
squares:launch({ grid = 1, block = 1 }, sq32, 5001)
squares:launch({ grid = 1, block = 1 }, sq64, 100000001)
check.eq(table.concat(sq32:to_table(), " "), "2 1 1 2", "float32 out, i = 5001")
check.eq(table.concat(sq64:to_table(), " "), "2 1 1 2", "float64 out, i = 100000001 (i * i past 2^53)")
-- int64 wraps as NumPy's, and % takes the divisor's sign
local wraps = cuda.zeros(3, "int64")
kernels.jit(function(out, i)
  out[1] = (i * i) % 1000
  out[2] = -(i * i) % 1000
  out[3] = (i * i) % -1000
end):launch({ grid = 1, block = 1 }, wraps, 3037000500)
check.eq(table.concat(wraps:to_table(), " "), "384 616 -616", "int64 squares wrap")
-- an integer % by zero stops the launch (it stored -nan), naming the
-- operation and the kernel; the runtime is usable afterwards
local modzero = kernels.jit(function(out, i)
  out[1] = (i * i) % 0
end, { name = "modzero" })
check.error("jit.lua:" .. debug.getinfo(1).currentline - 2 .. ": integer modulo by zero: the divisor of i * i % 0 is 0, in the kernel modzero at",
  modzero.launch, modzero, { grid = 1, block = 1 }, sq32, 5001)
local modn = kernels.jit(function(out, i, n) out[kernels.grid(1)] = i % n end)
check.error("integer modulo by zero: the divisor of i % n is 0", modn.launch, modn, { grid = 2, block = 2 }, sq32, 5001, 0)
modn:launch({ grid = 2, block = 2 }, sq32, 5001, 7)
check.eq(table.concat(sq32:to_table(), " "), "3 3 3 3", "the same kernel with a divisor")
-- an index made by math.floor of a NaN stops the kernel with the error, on
-- the GPU without touching memory outside the array
local hist = kernels.jit(function(counts, x)
  local i = kernels.grid(1)
  if i <= #x then kernels.atomic_add(counts, math.floor(x[i] * #counts) + 1, 1) end
end, { name = "hist" })
local counts = cuda.zeros(4, "int32")
hist:launch({ grid = 1, block = 32 }, counts, cuda.to_device({ 0.1, 0.3, 0.6, 0.9, 0.95 }, "float64"))
check.eq(table.concat(counts:to_table(), " "), "1 1 1 2", "a histogram by math.floor")
check.error("math.floor(x[i] * #counts) has no int64 value (its argument is NaN, an infinity or beyond 2^63 in magnitude), in the kernel hist at",
  hist.launch, hist, { grid = 1, block = 32 }, counts, cuda.to_device({ 0.1, 0 / 0 }, "float64"))

-- A number argument or a captured number -0 is the integer 0, as a
-- literal -0 is (an integer has no minus zero): it offsets an index as 0
-- does, on both backends, where a float would be refused as an index
-- (and math.floor(-0) is -0 again)
local zero = 0
local minus_zero = -zero
local shifted = kernels.jit(function(out, x, off)
  local i = kernels.grid(1)
  if i <= #out then out[i] = x[i + off] + x[i + minus_zero] end
end)
local shift_in, shift_out = cuda.to_device({ 1, 2, 3 }, "float64"), cuda.zeros(2, "float64")
shifted:launch({ grid = 1, block = 32 }, shift_out, shift_in, minus_zero)
check.eq(table.concat(shift_out:to_table(), " "), "2 4", "an index offset of -0")
shifted:launch({ grid = 1, block = 32 }, shift_out, shift_in, math.ceil(-0.5))
check.eq(table.concat(shift_out:to_table(), " "), "2 4", "an index offset of math.ceil(-0.5)")

-- a choice between a float and a constant written with if, in a kernel
-- and in a map, keeps Lua's zero: the compiler must not make it a min or
-- max instruction, which orders -0 below 0
local choices = {
  "if x < 0 then y = 0 end",
  "if x < 0 then y = 0 else y = x end",
  "if x > 0 then y = x else y = 0 end",
  "if x >= 0 then y = 0 else y = x end",
  "if x <= 0 then y = x else y = 0 end",
  "if x > 0 then y = 0 end",
  "if 0 < x then y = 0 end",
  "if x > -1 then y = 0 end",
  "if x < 0 then y = -y end",
  "if x < w then y = w end",
  "if w > x then y = w end",
}
local signed0 = { zero, minus_zero, 1, -1, 0 / 0, 0.5 }
for _, dtype in ipairs({ "float32", "float64" }) do
  local xs = cuda.to_device(signed0, dtype)
  local ys = cuda.zeros(#signed0, dtype)
  for _, c in ipairs(choices) do
    local body = "local y = x " .. c .. " return y"
    local ref = assert(loadstring("return function(x, w) " .. body .. " end"))()
    local k = kernels.jit(assert(loadstring([[return function(out, xs, w)
      local i = kernels.grid(1)
      if i <= #out then
        local x = xs[i]
        ]] .. "local y = x " .. c .. [[
        out[i] = y
      end
    end]])()))
    local map = assert(loadstring("return function(x, w) " .. body .. " end"))()
    for _, w in ipairs({ zero, minus_zero }) do
      for _, run in ipairs({
        { "kernel", function() k:launch({ grid = 1, block = 32 }, ys, xs, w) end },
        { "map", function() kernels.map(map, ys, xs, w) end },
      }) do
        run[2]()
        for i, v in ipairs(ys:to_table()) do
          local want = ref(signed0[i], check.int(w)) -- a -0 argument is the integer 0
          if not check.same_bits(v, want) then
            error(string.format("%s %s %q with x = %s, w = %s: %s, plain Lua %s", dtype, run[1], c, signed0[i], w, v, want))
          end
        end
      end
    end
  end
end

-- bad input
check.error("kernels.jit: bad argument #1 (a Lua function expected, got number)", kernels.jit, 42)
check.error("kernels.jit: bad argument #1 (a function written in a script is expected", kernels.jit, print)
check.error("kernels.jit: bad argument #2 (unknown option grid", kernels.jit, function() end, { grid = 1 })
check.error("jit: testdata/jit.lua:" .. debug.getinfo(1).currentline + 1 .. ": a table constructor is not allowed in a kernel", kernels.jit, function(x)
  local t = {}
end)
check.error("the captured local vadd is a userdata; a kernel may capture numbers", kernels.jit, function(x)
  x[1] = vadd
end)
check.error("takes 4 arguments, got 3", vadd.launch, vadd, { grid = 1, block = 1 }, a, b, out)
check.error("p is not an array parameter or a shared array", kernels.jit(function(p) p[1] = 0 end).launch,
  kernels.jit(function(p) p[1] = 0 end), { grid = 1, block = 1 }, 3)
check.error("the array n can only be indexed", vadd.launch, vadd, { grid = 1, block = 1 }, a, b, out, out)
check.error("Kernel:launch: bad argument #3 (DeviceArray or number expected, got string)", vadd.launch, vadd, { grid = 1, block = 1 }, a, "b", out, n)
check.error("the launch configuration needs block", vadd.launch, vadd, { grid = 1 }, a, b, out, n)
check.error("kernels.grid: only inside a function compiled by kernels.jit", kernels.grid, 1)

-- a kernel may not take the name of a helper the generated CUDA C defines
check.error("kernels.jit: name \"sat_i32\" is taken by a helper of the generated CUDA C", kernels.jit, function() end, { name = "sat_i32" })
