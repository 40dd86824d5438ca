-- User CUDA C compiled with NVRTC: on the GPU it runs and agrees with the
-- built-in kernels; on the CPU backend it is a clear error.
local cuda = require("cuda")
local kernels = require("kernels")

local source = [[
extern "C" __global__ void saxpy(float *y, float a, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
]]

if cuda.backend() ~= "cuda" then
  check.error("kernels.compile: user CUDA kernels need the cuda backend; this runtime runs on cpu",
    kernels.compile, source, "saxpy")
  return
end

local k = kernels.compile(source, "saxpy", { options = { "--fmad=false" } })
local n = 10000
local x = cuda.rand(n, "float32", 1)
local y = cuda.rand(n, "float32", 2)
local want = y:clone()
kernels.axpy(want, 2.5, x)
k:launch({ grid = math.ceil(n / 256), block = 256 }, y, 2.5, x, n)
check.eq(kernels.max_abs_diff(y, want), 0, "user saxpy equals kernels.axpy")

-- on a stream, with the block given as a table
local s = cuda.stream()
k:launch({ grid = { math.ceil(n / 128) }, block = { 128, 1, 1 }, stream = s }, y, -2.5, x, n)
s:synchronize()

-- arguments are checked against the declaration before anything launches
check.error("argument 4 (int n): an integer in", k.launch, k, { grid = 1, block = 32 }, y, 2.5, x, 10.5)
check.error("argument 1 (float *y): the array is float64 but the parameter points to float32", k.launch, k,
  { grid = 1, block = 32 }, cuda.zeros(4, "float64"), 2.5, x, 4)
check.error("argument 2 (float a): a number is expected, got a DeviceArray", k.launch, k, { grid = 1, block = 32 }, y, x, x, 4)
check.error("saxpy takes 4 arguments (float *y, float a, const float *x, int n), got 3", k.launch, k,
  { grid = 1, block = 32 }, y, 2.5, x)
check.error("the launch configuration needs block", k.launch, k, { grid = 1 }, y, 2.5, x, 4)
local dead = cuda.zeros(4)
dead:free()
check.error("use of freed array", k.launch, k, { grid = 1, block = 4 }, dead, 1, dead, 4)
-- the device refuses a block of 4096 threads: a clear error, and the runtime carries on
check.error("block", k.launch, k, { grid = 1, block = 4096 }, y, 1, x, 4)
-- NVRTC's log comes back in the error
local err = check.error("kernels.compile", kernels.compile, "__global__ void broken(float *x) { x[0] = ; }", "broken")
assert(tostring(err):find("expected an expression", 1, true), "NVRTC log in the error: " .. tostring(err))
check.error("no `__global__ void missing(...)` in the source", kernels.compile, source, "missing")
-- an explicit signature works where the declaration cannot be read
local k2 = kernels.compile("#define KERNEL extern \"C\" __global__ void\nKERNEL fill7(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] = 7; }",
  "fill7", { signature = "float *x, int n" })
local z = cuda.zeros(32)
k2:launch({ grid = 1, block = 32 }, z, 32)
check.eq(kernels.sum(z), 7 * 32, "kernel with an explicit signature")
check.eq(kernels.max_abs_diff(x, x), 0, "runtime still usable")
