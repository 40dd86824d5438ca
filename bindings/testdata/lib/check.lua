-- The assertions every conformance script may use. They live in Lua so
-- that a failure reports the script's own line; the runner also sets
-- tmpdir, a directory of the script's own for files it writes.
check = {}
function check.error(pattern, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then error("expected an error matching '" .. pattern .. "', got success", 2) end
  if not string.find(tostring(err), pattern, 1, true) then
    error("expected an error containing '" .. pattern .. "', got: " .. tostring(err), 2)
  end
  return err
end
function check.eq(got, want, what)
  if got ~= want then error(string.format("%s: got %s, want %s", what or "value", tostring(got), tostring(want)), 2) end
end
function check.near(got, want, tol, what)
  if not (math.abs(got - want) <= tol * math.max(1, math.abs(want))) then
    error(string.format("%s: got %.9g, want %.9g (tolerance %g)", what or "value", got, want, tol), 2)
  end
end
-- rel is ||x - y|| / ||y|| computed on the device.
function check.rel(x, y)
  local d = x:clone()
  require("kernels").axpy(d, -1, y)
  local r = require("kernels").norm(d) / require("kernels").norm(y)
  d:free()
  return r
end
tolerance = { float32 = 1e-5, float64 = 1e-12, float16 = 1e-2, bfloat16 = 1e-2, tf32 = 5e-3 }
-- matmul is alpha*op(A)*op(B) + beta*C on host tables (nested, 2-D) in
-- float64, op transposing under o.trans_a and o.trans_b: the plain Lua
-- product kernels.matmul is checked against.
function check.matmul(A, B, C, o)
  local m, k = #A, #A[1]
  if o.trans_a then m, k = k, m end
  local n = o.trans_b and #B or #B[1]
  local out = {}
  for i = 1, m do
    out[i] = {}
    for j = 1, n do
      local s = 0
      for l = 1, k do
        local a = o.trans_a and A[l][i] or A[i][l]
        local b = o.trans_b and B[j][l] or B[l][j]
        s = s + a * b
      end
      out[i][j] = (o.alpha or 1) * s + (o.beta or 0) * C[i][j]
    end
  end
  return out
end

-- Random programs compared with plain Lua (map_lua.lua, jit_lua.lua).
-- check.generator(seed) gives rand(n), an integer from 1 to n, and
-- pick(t), an element of t, from Park and Miller's generator: each
-- product is below 2^53, so doubles keep it exact and the programs are
-- the same on every backend (a multiplier near 2^30 would round, and its
-- sequence would repeat after about ten thousand draws).
function check.generator(seed)
  local state = seed
  local function rand(n)
    state = state * 48271 % 2147483647
    return state % n + 1
  end
  return rand, function(t) return t[rand(#t)] end
end
-- A program's plain Lua copy sends each integer value of the kernel
-- language through check.int, which turns -0 into 0 (an int64 has none)
-- and raises check.skip where the kernel's int64 and Lua's double part
-- (NaN, beyond 2^53); check.literal keeps the compiler from folding a
-- literal into a constant expression, since Lua 5.1 keeps one constant
-- for 0 and -0 in a function and a folded -0 can turn another 0's sign.
check.skip = {}
-- check.same_bits: the same number, a zero's sign included; any NaN
-- matches any NaN.
function check.same_bits(x, y) return (x == y and 1 / x == 1 / y) or (x ~= x and y ~= y) end
function check.int(v)
  if v ~= v or v > 2 ^ 53 or v < -2 ^ 53 then error(check.skip) end
  return v + 0
end
function check.literal(v) return v end
-- check.wrap and check.saturate convert a value as a store into an
-- integer array does: an integer wraps into the dtype's bits (exact for
-- |v| up to 2^53), a float truncates toward zero and saturates at lo and
-- hi, NaN becoming 0.
function check.wrap(v, bits, signed)
  local r = v % 2 ^ bits
  if signed and r >= 2 ^ (bits - 1) then r = r - 2 ^ bits end
  return r
end
function check.saturate(v, lo, hi)
  if v ~= v then return 0 end
  v = v < 0 and math.ceil(v) or math.floor(v)
  return math.max(lo, math.min(hi, v)) + 0 -- + 0: no minus zero
end
-- check.digest(h, text) is h, a 32-bit hash, with text's bytes added:
-- what a script prints for the parity test to compare between backends.
function check.digest(h, text)
  for k = 1, #text do h = (h * 31 + text:byte(k)) % 4294967296 end
  return h
end
