-- cuda.rand and cuda.randn: uniform and standard normal numbers made on
-- the device, on every float dtype; new numbers at every call, the same
-- ones again after cuda.seed, the same on every backend for one seed.
local cuda = require("cuda")
local kernels = require("kernels")

local floats = { "float32", "float64", "float16", "bfloat16" }
local n = 1000000

for _, dt in ipairs(floats) do
  -- over 10^6 draws the mean has standard deviation 0.001 and the
  -- variance 0.0014: the bounds are five of those
  local z = cuda.randn(n, dt)
  check.eq(z.dtype, dt, "randn's dtype")
  local mean = kernels.sum(z) / n
  local var = kernels.norm(z) ^ 2 / n - mean ^ 2
  check.near(mean, 0, 0.005, dt .. " randn mean")
  check.near(var, 1, 0.007, dt .. " randn variance")
  local zero = cuda.zeros(n, dt)
  local largest = kernels.max_abs_diff(z, zero)
  assert(largest > 4 and largest < (dt == "float64" and 8.3 or 5.79), dt .. " randn's largest |z| is " .. largest)

  -- rand: in [0, 1), mean 1/2 less half a step of the dtype's grid,
  -- variance 1/12
  local u = cuda.rand(n, dt)
  local umean = kernels.sum(u) / n
  check.near(umean, 0.5, 0.004, dt .. " rand mean")
  check.near(kernels.norm(u) ^ 2 / n - umean ^ 2, 1 / 12, 0.004, dt .. " rand variance")
  assert(kernels.max_abs_diff(u, zero) < 1, dt .. " rand stays below 1")
  for _, a in ipairs({ z, zero, u }) do a:free() end

  -- successive calls draw new numbers
  for _, gen in ipairs({ cuda.rand, cuda.randn }) do
    local a, b = gen({ 10, 10 }, dt), gen({ 10, 10 }, dt)
    assert(kernels.max_abs_diff(a, b) > 0, dt .. ": two calls drew the same numbers")
  end
end

-- cuda.seed replays the sequence; a seed argument is the first draw after
-- cuda.seed of that number, and leaves the sequence where it was
local function draws()
  return { cuda.rand(50, "float64"), cuda.randn({ 5, 10 }, "float16"), cuda.randn(7), cuda.rand({ 2, 2 }, "bfloat16") }
end
cuda.seed(42)
local first = draws()
cuda.seed(42)
local again = cuda.rand(50, "float64")
check.eq(kernels.max_abs_diff(cuda.rand(50, "float64", 3), cuda.rand(50, "float64", 3)), 0, "a seed argument repeats")
local rest = { again, cuda.randn({ 5, 10 }, "float16"), cuda.randn(7), cuda.rand({ 2, 2 }, "bfloat16") }
for i = 1, #first do check.eq(kernels.max_abs_diff(first[i], rest[i]), 0, "draw " .. i .. " after cuda.seed(42)") end
check.eq(kernels.max_abs_diff(cuda.rand(50, "float64", 42), first[1]), 0, "seed 42 is the first draw after cuda.seed(42)")
cuda.seed(43)
assert(kernels.max_abs_diff(cuda.rand(50, "float64"), first[1]) > 0, "another seed draws other numbers")

-- one seed, the same numbers on every backend (the Go reference's)
local golden = {
  rand = {
    float64 = { 0.88331080821364261, 0.5665615751722809, 0.59118973419807941 },
    float32 = { 0.88331079483032227, 0.56656152009963989, 0.5911896824836731 },
    float16 = { 0.88330078125, 0.56640625, 0.5908203125 },
    bfloat16 = { 0.8828125, 0.56640625, 0.58984375 },
  },
  randn = {
    float64 = { 1.191701311669463, 0.16762684640915551, 0.23060648177033116 },
    -- float32 and the 2-byte floats from the float32 formula (Box–Muller
    -- on pairs of counters)
    float32 = { 0.82886916399002075, 0.033526457846164703, 1.0166217088699341 },
    float16 = { 0.8291015625, 0.033538818359375, 1.0166015625 },
    bfloat16 = { 0.828125, 0.033447265625, 1.015625 },
  },
}
for name, byType in pairs(golden) do
  for dt, want in pairs(byType) do
    local got = cuda[name](3, dt, 1):to_table()
    for i = 1, 3 do check.eq(got[i], want[i], name .. " " .. dt .. " seed 1 element " .. i) end
  end
end

-- empty arrays and mistakes
check.eq(#cuda.randn({ 0, 4 }), 0, "an empty randn")
check.error("cuda.randn: randn needs a float dtype, got int32", cuda.randn, 4, "int32")
check.error("cuda.rand: bad argument #3 (seed must be non-negative, got -1)", cuda.rand, 4, "float32", -1)
check.error("cuda.seed: bad argument #1 (seed must be an integer, got 1.5)", cuda.seed, 1.5)
check.error("cuda.seed: bad argument #1 (seed must be an integer, got nil)", cuda.seed)
