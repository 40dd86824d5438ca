-- kernels.jit against plain Lua on random kernels: each program is a
-- kernel of locals, assignments (one value and several), if/elseif/else,
-- numeric for loops (integer and float, either direction), while loops,
-- break, an early return, a device function giving two values,
-- math.frexp and math.modf, and a local array, over integers, float64
-- and an integer and a float parameter. The kernel runs over 64 threads; plain Lua runs
-- the same source once per index with tables for the arrays. Every
-- element written must be the same number (any NaN matches any NaN).
--
-- The kernel language's integers are int64, which has no minus zero and
-- wraps where Lua's doubles round. The plain Lua copy of a program sends
-- every integer operation through I, which turns -0 into 0 and gives up
-- on the program once an integer leaves the range where doubles are
-- exact, or is NaN or infinite (a floor the kernel refuses). A program
-- plain Lua gives up on is not launched; every other one must launch.
-- Exact operations run everywhere; the CPU backend, whose evaluator
-- computes each math function as Lua's math library does, also runs ^
-- and the transcendental functions.
local cuda = require("cuda")
local kernels = require("kernels")

local cpu = cuda.backend() == "cpu"
local programs = cpu and 300 or 60

-- the same programs on every backend and every run
local rand, pick = check.generator(20261129)

local float_lits = { "0.5", "2.5", "-1.25", "3.0", "100.0", "1e300", "1e-300", "(1/0)", "(0/0)", "0.1" }
local int_lits = { "0", "1", "2", "3", "5", "7", "-1", "-3", "10" }
local exact_calls1, exact_ops = { "math.sqrt", "math.abs" }, { "+", "-", "*", "/", "%" }
local float_calls1, float_ops = exact_calls1, exact_ops
if cpu then
  float_calls1, float_ops = { "math.exp", "math.log", "math.sin", "math.cos", "math.atan", "math.tanh" }, { "^" }
  for _, f in ipairs(exact_calls1) do float_calls1[#float_calls1 + 1] = f end
  for _, o in ipairs(exact_ops) do float_ops[#float_ops + 1] = o end
end

-- gen.int, gen.float and gen.cond write an expression of that type from
-- the locals in scope; ctx.arrays says whether the kernel's parameters
-- are there (a device function sees only its own).
local gen = {}
local function locals_of(scope, ty, writable)
  local r = {}
  for _, v in ipairs(scope) do
    if v.ty == ty and not (writable and v.ro) then r[#r + 1] = v.name end
  end
  return r
end

function gen.int(depth, scope, ctx)
  local r = rand(12)
  if depth <= 0 or r <= 4 then
    local atoms = locals_of(scope, "int")
    atoms[#atoms + 1] = "L(" .. pick(int_lits) .. ")"
    if ctx.arrays then
      atoms[#atoms + 1] = "i"
      atoms[#atoms + 1] = "m"
      atoms[#atoms + 1] = "(#out)"
    end
    if ctx.block then
      atoms[#atoms + 1] = "M.shape[" .. rand(2) .. "]"
      atoms[#atoms + 1] = "LANE()"
    end
    return pick(atoms)
  elseif r <= 7 then
    return "I(" .. gen.int(depth - 1, scope, ctx) .. " " .. pick({ "+", "-", "*" }) .. " " .. gen.int(depth - 1, scope, ctx) .. ")"
  elseif r == 8 then
    return "I(-(" .. gen.int(depth - 1, scope, ctx) .. "))"
  elseif r == 9 then
    return "I(" .. gen.int(depth - 1, scope, ctx) .. " % " .. pick({ "3", "7", "-4", "2" }) .. ")"
  elseif r == 10 then
    return pick({ "math.max", "math.min" }) .. "(" .. gen.int(depth - 1, scope, ctx) .. ", " .. gen.int(depth - 1, scope, ctx) .. ")"
  elseif r >= 11 and ctx.arrays and rand(4) > 1 then
    -- the floor of an input, which always has an int64 value
    return "I(" .. pick({ "math.floor", "math.ceil" }) .. "(" .. pick({ "a[i]", "b[i]", "a[i] * 2.5", "b[i] / 3" }) .. "))"
  end
  return "I(" .. pick({ "math.floor", "math.ceil" }) .. "(" .. gen.float(depth - 1, scope, ctx) .. "))"
end

function gen.float(depth, scope, ctx)
  local r = rand(14)
  if depth <= 0 or r <= 4 then
    local atoms = locals_of(scope, "float")
    atoms[#atoms + 1] = "L(" .. pick(float_lits) .. ")"
    if ctx.arrays then
      atoms[#atoms + 1] = "a[i]"
      atoms[#atoms + 1] = "b[i]"
      atoms[#atoms + 1] = pick({ "a", "b" }) .. "[I(I(" .. gen.int(depth - 1, scope, ctx) .. " % #a) + 1)]"
      atoms[#atoms + 1] = "z"
      atoms[#atoms + 1] = "la[I(I(" .. gen.int(depth - 1, scope, ctx) .. " % 4) + 1)]"
      if ctx.shared then
        atoms[#atoms + 1] = "sh[I(I(" .. gen.int(depth - 1, scope, ctx) .. " % 4) + 1)][I(I(" .. gen.int(depth - 1, scope, ctx) .. " % 8) + 1)]"
      end
      if ctx.block then
        atoms[#atoms + 1] = "M[I(I(" .. gen.int(depth - 1, scope, ctx) .. " % M.shape[1]) + 1)][I(I(" .. gen.int(depth - 1, scope, ctx) .. " % M.shape[2]) + 1)]"
      end
    end
    return pick(atoms)
  elseif r <= 7 then
    -- at least one float operand, so that the result is a float in the
    -- kernel too
    local x, y = gen.float(depth - 1, scope, ctx), (rand(3) == 1 and gen.int or gen.float)(depth - 1, scope, ctx)
    if rand(2) == 1 then x, y = y, x end
    return "(" .. x .. " " .. pick(float_ops) .. " " .. y .. ")"
  elseif r == 8 then
    return "(" .. gen.int(depth - 1, scope, ctx) .. " / " .. gen.int(depth - 1, scope, ctx) .. ")"
  elseif r == 9 then
    return "(-(" .. gen.float(depth - 1, scope, ctx) .. "))"
  elseif r == 10 then
    return pick(float_calls1) .. "(" .. gen.float(depth - 1, scope, ctx) .. ")"
  elseif r == 11 then
    return pick({ "math.max", "math.min" }) .. "(" .. gen.float(depth - 1, scope, ctx) .. ", " .. (rand(2) == 1 and gen.int or gen.float)(depth - 1, scope, ctx) .. ")"
  elseif r == 12 then
    return "math.fmod(" .. gen.float(depth - 1, scope, ctx) .. ", " .. gen.float(depth - 1, scope, ctx) .. ")"
  elseif r == 13 then
    return "math.ldexp(" .. gen.float(depth - 1, scope, ctx) .. ", " .. pick({ "1", "-3", "7", "1024", "-1080" }) .. ")"
  end
  return "(" .. gen.int(depth - 1, scope, ctx) .. " + " .. gen.float(depth - 1, scope, ctx) .. ")"
end

function gen.cond(depth, scope, ctx)
  local r = rand(8)
  if depth <= 0 or r <= 5 then
    local x = (rand(2) == 1 and gen.int or gen.float)(depth - 1, scope, ctx)
    local y = (rand(2) == 1 and gen.int or gen.float)(depth - 1, scope, ctx)
    return "(" .. x .. " " .. pick({ "<", "<=", ">", ">=", "==", "~=" }) .. " " .. y .. ")"
  elseif r == 6 then
    return "(" .. gen.cond(depth - 1, scope, ctx) .. " " .. pick({ "and", "or" }) .. " " .. gen.cond(depth - 1, scope, ctx) .. ")"
  end
  return "(not " .. gen.cond(depth - 1, scope, ctx) .. ")"
end

local function copy(t)
  local r = {}
  for k, v in ipairs(t) do r[k] = v end
  return r
end

-- block writes statements into out, indented, from a copy of scope.
local block
local function statement(out, ind, depth, scope, ctx)
  local r = rand(18)
  local function expr_for(ty) return (ty == "int" and gen.int or gen.float)(2, scope, ctx) end
  if r <= 4 then
    ctx.names = ctx.names + 1
    local ty = rand(2) == 1 and "int" or "float"
    local name = "v" .. ctx.names
    out[#out + 1] = ind .. "local " .. name .. " = " .. expr_for(ty)
    scope[#scope + 1] = { name = name, ty = ty }
    return
  elseif r <= 7 then
    local ty = rand(2) == 1 and "int" or "float"
    local targets = locals_of(scope, ty, true)
    if #targets > 0 then
      local t = pick(targets)
      -- a float local may take an integer value, converted where assigned
      local e = (ty == "float" and rand(3) == 1) and gen.int(2, scope, ctx) or expr_for(ty)
      out[#out + 1] = ind .. t .. " = " .. e
      return
    end
  elseif r == 8 then
    local ty = rand(2) == 1 and "int" or "float"
    local targets = locals_of(scope, ty, true)
    if #targets >= 2 then
      local x, y = pick(targets), pick(targets)
      out[#out + 1] = ind .. x .. ", " .. y .. " = " .. y .. ", " .. expr_for(ty)
      return
    end
  end
  if depth <= 0 then
    out[#out + 1] = ind .. "-- (depth)"
    return
  end
  if r <= 10 then
    out[#out + 1] = ind .. "if " .. gen.cond(2, scope, ctx) .. " then"
    block(out, ind .. "  ", depth - 1, scope, ctx)
    if rand(2) == 1 then
      out[#out + 1] = ind .. "elseif " .. gen.cond(2, scope, ctx) .. " then"
      block(out, ind .. "  ", depth - 1, scope, ctx)
    end
    if rand(2) == 1 then
      out[#out + 1] = ind .. "else"
      block(out, ind .. "  ", depth - 1, scope, ctx)
    end
    out[#out + 1] = ind .. "end"
  elseif r <= 12 then
    ctx.names = ctx.names + 1
    local name = "j" .. ctx.names
    local inner = copy(scope)
    if rand(3) == 1 then
      out[#out + 1] = ind .. "for " .. name .. " = " .. pick({ "0.5, 2.0, 0.5", "2.0, -1.0, -0.75", "0.25, 1" }) .. " do"
      inner[#inner + 1] = { name = name, ty = "float", ro = true }
    else
      local bounds = ctx.arrays and { "1, m", "m, 1, -1", "1, 5, 2", "4, -2, -3", "I(i % 3), 2" } or { "1, 3", "3, 1, -1", "0, 4, 2" }
      out[#out + 1] = ind .. "for " .. name .. " = " .. pick(bounds) .. " do"
      inner[#inner + 1] = { name = name, ty = "int", ro = true }
    end
    local saved = ctx.loop
    ctx.loop = true
    block(out, ind .. "  ", depth - 1, inner, ctx)
    ctx.loop = saved
    out[#out + 1] = ind .. "end"
  elseif r == 13 then
    ctx.names = ctx.names + 1
    local w = "w" .. ctx.names
    out[#out + 1] = ind .. "local " .. w .. " = 0"
    out[#out + 1] = ind .. "while " .. w .. " < " .. pick({ "2", "3", "4" }) .. " and " .. gen.cond(1, scope, ctx) .. " do"
    out[#out + 1] = ind .. "  " .. w .. " = " .. w .. " + 1"
    local saved = ctx.loop
    ctx.loop = true
    block(out, ind .. "  ", depth - 1, scope, ctx)
    ctx.loop = saved
    out[#out + 1] = ind .. "end"
  elseif r == 14 and ctx.loop then
    out[#out + 1] = ind .. "if " .. gen.cond(1, scope, ctx) .. " then break end"
  elseif r == 15 and ctx.arrays and not ctx.block then
    out[#out + 1] = ind .. "if " .. gen.cond(1, scope, ctx) .. " then out[i] = " .. gen.float(1, scope, ctx) .. "; oi[i] = " .. gen.int(1, scope, ctx) .. "; return end"
  elseif r == 16 and ctx.block and rand(2) == 1 then
    -- an integer atomic of the program's one kind: adds alone, or maxima
    -- alone, come to the same in any order of threads (a max after an add
    -- would not, and blocks have no order)
    out[#out + 1] = ind .. "AT_" .. ctx.atomic .. "(cnt, I(I(" .. gen.int(1, scope, ctx) .. " % 8) + 1), " .. gen.int(1, scope, ctx) .. ")"
  elseif r == 16 and ctx.block then
    -- a float atomic of the program's one float kind, into fc: maxima or
    -- minima are the same in any order; sums differ only in rounding
    out[#out + 1] = ind .. "FT_" .. ctx.fatomic .. "(fc, I(I(" .. gen.int(1, scope, ctx) .. " % 8) + 1), " .. gen.float(1, scope, ctx) .. ")"
  elseif r == 17 and ctx.arrays then
    out[#out + 1] = ind .. "la[I(I(" .. gen.int(1, scope, ctx) .. " % 4) + 1)] = " .. gen.float(2, scope, ctx)
  elseif r == 18 then
    -- two values from one math call: frexp's exponent is an integer
    ctx.names = ctx.names + 1
    local x, y = "x" .. ctx.names, "y" .. ctx.names
    local fn = pick({ "frexp", "modf" })
    out[#out + 1] = ind .. "local " .. x .. ", " .. y .. " = math." .. fn .. "(" .. gen.float(2, scope, ctx) .. ")"
    scope[#scope + 1] = { name = x, ty = "float" }
    scope[#scope + 1] = { name = y, ty = fn == "frexp" and "int" or "float" }
  elseif ctx.arrays and ctx.fn then
    ctx.names = ctx.names + 1
    local p, q = "p" .. ctx.names, "q" .. ctx.names
    out[#out + 1] = ind .. "local " .. p .. ", " .. q .. " = f(" .. gen.int(1, scope, ctx) .. ", " .. gen.float(1, scope, ctx) .. ")"
    scope[#scope + 1] = { name = p, ty = "float" }
    scope[#scope + 1] = { name = q, ty = "int" }
  else
    out[#out + 1] = ind .. "-- (none)"
  end
end

function block(out, ind, depth, scope, ctx)
  local inner = copy(scope)
  for _ = 1, rand(3) do statement(out, ind, depth, inner, ctx) end
end

-- narrow: the arrays are float32 or narrower, where an integer quotient
-- (a float64) would widen q, whose type is its float32 argument's: a
-- parameter keeps its type, so that program would be refused.
local narrow = false

-- program returns the kernel's source and plain Lua's: a chunk that,
-- given I, returns the function.
-- device_function maybe writes f, a device function of an integer and a
-- float, giving a float and an integer, with an early return on some
-- paths, and gives the kernel's context.
local function device_function(lines)
  local ctx = { names = 0, arrays = false }
  local fn = rand(2) == 1
  if fn then
    lines[#lines + 1] = "function f(p, q)"
    local scope = { { name = "p", ty = "int" }, { name = "q", ty = "float", ro = narrow } }
    block(lines, "  ", 2, scope, ctx)
    lines[#lines + 1] = "  if " .. gen.cond(1, scope, ctx) .. " then return " .. gen.float(1, scope, ctx) .. ", " .. gen.int(1, scope, ctx) .. " end"
    block(lines, "  ", 1, scope, ctx)
    lines[#lines + 1] = "  return " .. gen.float(2, scope, ctx) .. ", " .. gen.int(2, scope, ctx)
    lines[#lines + 1] = "end"
  end
  return { names = ctx.names, arrays = true, fn = fn }
end

-- With two_d, the kernel runs over an 8 x 8 grid of threads: r and c
-- from kernels.grid(2), i = (r - 1) * 8 + c, and it writes O[r][c] too.
local function program(two_d)
  local lines = { "local I, L, LA = ...", "local f" }
  local ctx = device_function(lines)
  lines[#lines + 1] = "@HEADER@"
  local scope = {}
  if two_d then
    lines[#lines + 1] = "  local i = (r - 1) * 8 + c"
    lines[#lines + 1] = "  if r <= O.shape[1] and c <= O.shape[2] then"
    scope = { { name = "r", ty = "int", ro = true }, { name = "c", ty = "int", ro = true } }
  else
    lines[#lines + 1] = "  if i <= #out then"
  end
  -- a thread's own array, made once, at its start, in a kernel as in Lua
  lines[#lines + 1] = "    local la = LA(4, " .. (narrow and '"float32"' or '"float64"') .. ")"
  block(lines, "    ", 3, scope, ctx)
  block(lines, "    ", 2, scope, ctx)
  lines[#lines + 1] = "    out[i] = " .. gen.float(3, scope, ctx)
  lines[#lines + 1] = "    oi[i] = " .. gen.int(3, scope, ctx)
  if two_d then lines[#lines + 1] = "    O[r][c] = " .. gen.float(2, scope, ctx) end
  local stores = not two_d and not narrow -- into int32 and uint8 arrays
  if stores then
    lines[#lines + 1] = "    wi32[i] = " .. gen.int(2, scope, ctx)
    lines[#lines + 1] = "    si32[i] = " .. gen.float(2, scope, ctx)
    lines[#lines + 1] = "    wu8[i] = " .. gen.int(2, scope, ctx)
    lines[#lines + 1] = "    su8[i] = " .. gen.float(2, scope, ctx)
  end
  lines[#lines + 1] = "  end"
  lines[#lines + 1] = "end"
  local src = table.concat(lines, "\n")
  local extra = stores and ", wi32, si32, wu8, su8" or ""
  local header = two_d and "return function(a, b, out, oi, m, z, O)\n  local r, c = kernels.grid(2)" or "return function(a, b, out, oi, m, z" .. extra .. ")\n  local i = kernels.grid(1)"
  local kernel = src:gsub("LA%(", "kernels.local_array("):gsub("[IL]%(", "("):gsub("@HEADER@", header)
  return kernel, (src:gsub("@HEADER@", two_d and "return function(a, b, out, oi, m, z, O, r, c)" or "return function(a, b, out, oi, m, z, i" .. extra .. ")"))
end

-- The plain Lua copy's I and L are check.int and check.literal; LA is a
-- local array, zeroed.
local I, L, skip = check.int, check.literal, check.skip
local function LA(n)
  local t = {}
  for k = 1, n do t[k] = 0 end
  return t
end

local n, m, z = 64, 3, 0.75
local at, bt = {}, {}
local values = { 0, -L(0), 1, -1, 0.5, 2, 3, -3.5, 7.25, 100, 0.1, 1e-5, -42, 12.5 }
for i = 1, n do at[i], bt[i] = pick(values), pick(values) end
local A, B = cuda.to_device(at, "float64"), cuda.to_device(bt, "float64")
local out, oi = cuda.zeros(n, "float64"), cuda.zeros(n, "int64")

local function same(x, y) return x == y or (x ~= x and y ~= y) end
-- a float element written, a zero's sign counts too
local wrap, saturate, same_bits = check.wrap, check.saturate, check.same_bits
local W32, S32, W8, S8 = cuda.zeros(n, "int32"), cuda.zeros(n, "int32"), cuda.zeros(n, "uint8"), cuda.zeros(n, "uint8")
local compared, skipped = 0, 0
for p = 1, programs do
  local ksrc, lsrc = program()
  local want, wanti, wantc = {}, {}, {}
  local ok, err = pcall(function()
    local ref = assert(loadstring(lsrc, "=program " .. p))(I, L, LA)
    for i = 1, n do
      local o, q, wi32, si32, wu8, su8 = {}, {}, {}, {}, {}, {}
      for k = 1, n do o[k], q[k], wi32[k], si32[k], wu8[k], su8[k] = 0, 0, 0, 0, 0, 0 end
      ref(at, bt, o, q, m, z, i, wi32, si32, wu8, su8)
      want[i], wanti[i] = o[i], q[i]
      wantc[i] = { wrap(wi32[i], 32, true), saturate(si32[i], -2 ^ 31, 2 ^ 31 - 1), wrap(wu8[i], 8, false), saturate(su8[i], 0, 255) }
    end
  end)
  if not ok and err == skip then
    skipped = skipped + 1
  elseif not ok then
    error("plain Lua failed on program " .. p .. ": " .. tostring(err) .. "\n" .. lsrc)
  else
    local k = kernels.jit(assert(loadstring(ksrc, "=program " .. p))())
    for _, x in ipairs({ out, oi, W32, S32, W8, S8 }) do kernels.fill(x, 0) end
    local lok, lerr = pcall(k.launch, k, { grid = 2, block = 32 }, A, B, out, oi, m, z, W32, S32, W8, S8)
    if not lok then error("kernels.jit refused program " .. p .. ": " .. tostring(lerr) .. "\n" .. ksrc) end
    local got, goti = out:to_table(), oi:to_table()
    local gotc = { W32:to_table(), S32:to_table(), W8:to_table(), S8:to_table() }
    for i = 1, n do
      if not same_bits(got[i], want[i]) or goti[i] ~= wanti[i] then
        error(string.format("program %d at i=%d (a=%.17g b=%.17g): the kernel wrote %.17g and %.17g, plain Lua %.17g and %.17g\n%s",
          p, i, at[i], bt[i], got[i], goti[i], want[i], wanti[i], ksrc))
      end
      for j, name in ipairs({ "wi32", "si32", "wu8", "su8" }) do
        if gotc[j][i] ~= wantc[i][j] then
          error(string.format("program %d at i=%d: %s holds %.17g, plain Lua's store converts to %.17g\n%s", p, i, name, gotc[j][i], wantc[i][j], ksrc))
        end
      end
    end
    compared = compared + 1
  end
end
-- most programs are compared
check.eq(compared > programs * 2 / 3, true, compared .. " compared, " .. skipped .. " skipped")

-- The same over a 2-D grid: each of 8 x 8 threads finds its row and
-- column with kernels.grid(2), and writes its element of out, of oi and
-- of an 8 x 8 array O.
local O2 = cuda.zeros({ 8, 8 }, "float64")
local programs2, compared2 = cpu and 100 or 20, 0
for p = 1, programs2 do
  local ksrc, lsrc = program(true)
  local want, wanti, wantO = {}, {}, { shape = { 8, 8 } }
  for r = 1, 8 do wantO[r] = {} end
  local ok, err = pcall(function()
    local ref = assert(loadstring(lsrc, "=2-D program " .. p))(I, L, LA)
    for r = 1, 8 do
      for c = 1, 8 do
        local o, q, Ot = {}, {}, { shape = { 8, 8 } }
        for k = 1, n do o[k], q[k] = 0, 0 end
        for k = 1, 8 do Ot[k] = { 0, 0, 0, 0, 0, 0, 0, 0 } end -- zeros, as the kernel's O is filled
        ref(at, bt, o, q, m, z, Ot, r, c)
        local i = (r - 1) * 8 + c
        want[i], wanti[i], wantO[r][c] = o[i], q[i], Ot[r][c]
      end
    end
  end)
  if not ok and err ~= skip then
    error("plain Lua failed on 2-D program " .. p .. ": " .. tostring(err) .. "\n" .. lsrc)
  elseif ok then
    local k = kernels.jit(assert(loadstring(ksrc, "=2-D program " .. p))())
    kernels.fill(out, 0)
    kernels.fill(oi, 0)
    kernels.fill(O2, 0)
    local lok, lerr = pcall(k.launch, k, { grid = { 2, 2 }, block = { 4, 4 } }, A, B, out, oi, m, z, O2)
    if not lok then error("kernels.jit refused 2-D program " .. p .. ": " .. tostring(lerr) .. "\n" .. ksrc) end
    local got, goti, gotO = out:to_table(), oi:to_table(), O2:to_table()
    for r = 1, 8 do
      for c = 1, 8 do
        local i = (r - 1) * 8 + c
        if not same_bits(got[i], want[i]) or goti[i] ~= wanti[i] or not same_bits(gotO[r][c], wantO[r][c]) then
          error(string.format("2-D program %d at r=%d c=%d: the kernel wrote %.17g, %.17g and %.17g, plain Lua %.17g, %.17g and %.17g\n%s",
            p, r, c, got[i], goti[i], gotO[r][c], want[i], wanti[i], wantO[r][c], ksrc))
        end
      end
    end
    compared2 = compared2 + 1
  end
end
check.eq(compared2 > programs2 * 2 / 3, true, compared2 .. " 2-D programs compared")

-- Block programs: two blocks of 32 threads, each thread writing its own
-- element of a 4 x 8 shared array, kernels.syncthreads(), every thread
-- reading any element and any of an 8 x 8 argument M, and again, with
-- warp shuffles, integer atomics of one kind into cnt and float atomics
-- of one kind into fc in between; each thread's last value goes into its
-- element of an 8 x 8 array O. The plain Lua copy runs each block's
-- threads as coroutines, and its barriers yield: every thread runs to the
-- barrier before any goes past it, as on the GPU. A block is one warp, so
-- kernels.syncwarp() is its barrier as kernels.syncthreads() is. Nothing
-- is read where another thread writes between two barriers, so the order
-- threads run in does not matter, and neither does the order of the
-- atomics, but for the rounding of float sums.
rand, pick = check.generator(47)
local function block_program()
  local lines = { "local I, L, LA, SY, SHD, SHX, AT_add, AT_max, AT_min, FT_add, FT_max, FT_min = ...", "local f" }
  local ctx = device_function(lines)
  ctx.block, ctx.atomic, ctx.fatomic = true, pick({ "add", "max", "min" }), pick({ "add", "max", "min" })
  local function barrier() lines[#lines + 1] = "  " .. pick({ "SY()", "SW()" }) end
  -- a warp shuffle of a float and one of an integer, where every lane
  -- meets it; a source past the warp's lanes, or a delta or mask below 0
  -- or from 32, gives the lane its own value
  local function shuffles(scope)
    for _, ty in ipairs({ "float", "int" }) do
      ctx.names = ctx.names + 1
      local name = "s" .. ctx.names
      local v = (ty == "float" and gen.float or gen.int)(2, scope, ctx)
      lines[#lines + 1] = "  local " .. name .. " = " .. pick({ "SHD", "SHX" }) .. "(" .. v .. ", " .. pick({ "0", "1", "2", "5", "16", "31", "32", "-1" }) .. ")"
      scope[#scope + 1] = { name = name, ty = ty }
    end
  end
  lines[#lines + 1] = "@HEADER@"
  lines[#lines + 1] = '  local la = LA(4, "float64")'
  -- the thread's element of the shared array
  lines[#lines + 1] = "  local tr, tc = math.floor((t - 1) / 8) + 1, (t - 1) % 8 + 1"
  local scope = {}
  shuffles(scope)
  lines[#lines + 1] = "  sh[tr][tc] = " .. gen.float(2, scope, ctx)
  barrier()
  ctx.shared = true
  block(lines, "  ", 2, scope, ctx)
  shuffles(scope)
  lines[#lines + 1] = "  local r0 = " .. gen.float(2, scope, ctx)
  scope[#scope + 1] = { name = "r0", ty = "float" }
  lines[#lines + 1] = "  FT_" .. ctx.fatomic .. "(fc, I(I(" .. gen.int(1, scope, ctx) .. " % 8) + 1), " .. gen.float(2, scope, ctx) .. ")"
  barrier()
  ctx.shared = false
  lines[#lines + 1] = "  sh[tr][tc] = " .. gen.float(2, scope, ctx)
  barrier()
  ctx.shared = true
  block(lines, "  ", 2, scope, ctx)
  lines[#lines + 1] = "  out[i] = " .. gen.float(3, scope, ctx)
  lines[#lines + 1] = "  oi[i] = " .. gen.int(3, scope, ctx)
  lines[#lines + 1] = "  O[math.floor((i - 1) / 8) + 1][(i - 1) % 8 + 1] = " .. gen.float(2, scope, ctx)
  lines[#lines + 1] = "end"
  local src = table.concat(lines, "\n")
  local kernel = src:gsub("[AF]T_(%a+)%(", "kernels.atomic_%1("):gsub("SY%(%)", "kernels.syncthreads()"):gsub("SW%(%)", "kernels.syncwarp()"):gsub("LA%(", "kernels.local_array(")
    :gsub("SHD%(", "kernels.shfl_down("):gsub("SHX%(", "kernels.shfl_xor("):gsub("LANE%(%)", "kernels.laneid()")
    :gsub("[IL]%(", "("):gsub("@HEADER@", 'return function(a, b, out, oi, m, z, cnt, M, fc, O)\n  local i = kernels.grid(1)\n  local t = kernels.threadIdx.x\n  local sh = kernels.shared({ 4, 8 }, "float64")')
  return kernel, (src:gsub("LANE%(%)", "t"):gsub("SW%(%)", "SY()"):gsub("@HEADER@", "return function(a, b, out, oi, m, z, cnt, M, fc, O, i, t, sh)"))
end
local function zeros(k)
  local r = {}
  for j = 1, k do r[j] = 0 end
  return r
end
local atomics = {
  function(c, k, v) c[k] = I(c[k] + v) end,
  function(c, k, v) c[k] = math.max(c[k], v) end,
  function(c, k, v) c[k] = math.min(c[k], v) end,
}
-- Float atomics: a sum also adds up the magnitudes it added, which bound
-- how far another order's rounding can take it.
local fmag = {}
local fatomics = {
  function(c, k, v) c[k], fmag[k] = c[k] + v, fmag[k] + math.abs(v) end,
  function(c, k, v) if v > c[k] then c[k] = v end end, -- a NaN on either side leaves it
  function(c, k, v) if v < c[k] then c[k] = v end end,
}
local cnt, fc, O = cuda.zeros(8, "int64"), cuda.zeros(8, "float64"), cuda.zeros({ 8, 8 }, "float64")
-- In plain Lua a barrier and a shuffle yield; a block is one warp. The
-- lane a shuffle reads (xor without Lua 5.1's missing bit operations):
local function xor(x, y)
  local r, bit = 0, 1
  while x > 0 or y > 0 do
    if x % 2 ~= y % 2 then r = r + bit end
    x, y, bit = math.floor(x / 2), math.floor(y / 2), bit * 2
  end
  return r
end
local function source(kind, lane, arg)
  if arg < 0 or arg >= 32 then return lane end
  if kind == "down" then return lane + arg <= 32 and lane + arg or lane end
  return xor(lane - 1, arg) + 1
end
local function SY() coroutine.yield("sync") end
local function SHD(v, d) return coroutine.yield("down", v, d) end
local function SHX(v, mask) return coroutine.yield("xor", v, mask) end
-- M is b's elements as an 8 x 8 matrix; plain Lua's has rows and a shape
local M, Mt = B:reshape({ 8, 8 }), { shape = { 8, 8 } }
for r = 1, 8 do
  Mt[r] = {}
  for c = 1, 8 do Mt[r][c] = bt[(r - 1) * 8 + c] end
end
local bprograms, bcompared, bskipped = cpu and 150 or 30, 0, 0
for p = 1, bprograms do
  local ksrc, lsrc = block_program()
  local o, q, c, fcl, Ot = zeros(n), zeros(n), zeros(8), zeros(8), { shape = { 8, 8 } }
  for r = 1, 8 do Ot[r] = zeros(8) end
  fmag = zeros(8)
  local ok, err = pcall(function()
    local ref = assert(loadstring(lsrc, "=block program " .. p))(I, L, LA, SY, SHD, SHX, atomics[1], atomics[2], atomics[3], unpack(fatomics))
    for blk = 0, 1 do
      local sh, threads = { zeros(8), zeros(8), zeros(8), zeros(8) }, {}
      for t = 1, 32 do
        threads[t] = coroutine.create(function() ref(at, bt, o, q, m, z, c, Mt, fcl, Ot, blk * 32 + t, t, sh) end)
      end
      local running, given = true, {}
      while running do -- a round: every thread to its next barrier or shuffle
        running = false
        local met = {}
        for t = 1, 32 do
          if coroutine.status(threads[t]) ~= "dead" then
            met[t] = { coroutine.resume(threads[t], given[t]) }
            if not met[t][1] then error(met[t][2], 0) end
            running = running or coroutine.status(threads[t]) ~= "dead"
          end
        end
        given = {}
        for t = 1, 32 do
          local kind = met[t] and met[t][2]
          if kind == "down" or kind == "xor" then given[t] = met[source(kind, t, met[t][4])][3] end
        end
      end
    end
  end)
  if not ok and err == skip then
    bskipped = bskipped + 1
  elseif not ok then
    error("plain Lua failed on block program " .. p .. ": " .. tostring(err) .. "\n" .. lsrc)
  else
    local k = kernels.jit(assert(loadstring(ksrc, "=block program " .. p))())
    kernels.fill(out, 0)
    kernels.fill(oi, 0)
    kernels.fill(cnt, 0)
    kernels.fill(fc, 0)
    kernels.fill(O, 0)
    local lok, lerr = pcall(k.launch, k, { grid = 2, block = 32 }, A, B, out, oi, m, z, cnt, M, fc, O)
    if not lok then error("kernels.jit refused block program " .. p .. ": " .. tostring(lerr) .. "\n" .. ksrc) end
    local got, goti, gotc, gotf, gotO = out:to_table(), oi:to_table(), cnt:to_table(), fc:to_table(), O:to_table()
    for i = 1, n do
      if not same_bits(got[i], o[i]) or goti[i] ~= q[i] then
        error(string.format("block program %d at i=%d: the kernel wrote %.17g and %.17g, plain Lua %.17g and %.17g\n%s",
          p, i, got[i], goti[i], o[i], q[i], ksrc))
      end
    end
    for j = 1, 8 do
      if gotc[j] ~= c[j] then
        error(string.format("block program %d: cnt[%d] is %.17g, plain Lua's %.17g\n%s", p, j, gotc[j], c[j], ksrc))
      end
      -- a sum in another order is within its rounding: at most one
      -- rounding an addition, 2^-52 of the magnitudes added so far
      local near = math.abs(gotf[j] - fcl[j]) <= 2 ^ -40 * fmag[j] or fmag[j] > 1e300
      if not same(gotf[j], fcl[j]) and not near then
        error(string.format("block program %d: fc[%d] is %.17g, plain Lua's %.17g (magnitudes %.17g)\n%s", p, j, gotf[j], fcl[j], fmag[j], ksrc))
      end
      for r = 1, 8 do
        if not same_bits(gotO[j][r], Ot[j][r]) then
          error(string.format("block program %d: O[%d][%d] is %.17g, plain Lua's %.17g\n%s", p, j, r, gotO[j][r], Ot[j][r], ksrc))
        end
      end
    end
    bcompared = bcompared + 1
  end
end
check.eq(bcompared > bprograms * 2 / 3, true, bcompared .. " block programs compared, " .. bskipped .. " skipped")

-- The same kernels over float32, float16 and bfloat16 arrays, which
-- compute in float32 with each operation rounded, have no plain Lua to
-- compare with: each backend prints a digest of what every 25 programs
-- wrote (the bits of each element, and the message of a launch that
-- stopped, as a floor of NaN stops it), which the parity test compares
-- between the backends. Only exact operations: CUDA's and Lua's
-- transcendental functions differ in the last bits.
float_calls1, float_ops, narrow = exact_calls1, exact_ops, true
rand, pick = check.generator(31) -- the same programs on every backend, whatever ran above
local digest = check.digest
for _, dt in ipairs({ "float32", "float16", "bfloat16" }) do
  local A, B = cuda.to_device(at, dt), cuda.to_device(bt, dt)
  local out = cuda.zeros(n, dt)
  local h, launched, line = 0, 0, {}
  for p = 1, 100 do
    local ksrc = program()
    local k = kernels.jit(assert(loadstring(ksrc, "=program " .. p))())
    kernels.fill(out, 0)
    kernels.fill(oi, 0)
    local ok, err = pcall(k.launch, k, { grid = 2, block = 32 }, A, B, out, oi, m, z)
    if ok then
      launched = launched + 1
      local got, goti = out:to_table(), oi:to_table()
      for i = 1, n do
        -- any NaN is a NaN, as above
        h = digest(h, (got[i] ~= got[i] and "nan" or string.format("%.9g", got[i])) .. string.format(" %.0f;", goti[i]))
      end
    elseif tostring(err):find("has no int64 value", 1, true) then
      -- on the GPU the first thread to stop names its line, which may
      -- be another one's than on the CPU
      h = digest(h, "stopped")
    else
      error("kernels.jit refused program " .. p .. " over " .. dt .. ": " .. tostring(err) .. "\n" .. ksrc)
    end
    if p % 25 == 0 then
      line[#line + 1] = string.format("%08x", h)
      h = 0
    end
  end
  print(string.format("%s: %d of 100 launched, %s", dt, launched, table.concat(line, " ")))
  A:free(); B:free(); out:free()
end
