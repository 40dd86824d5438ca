-- Shapes have at most 64 dimensions (NumPy 2's limit) wherever they enter:
-- every constructor, reshape, .npy headers; refusing 100,000 of them is
-- immediate, and printing 64 of them is linear.
local cuda = require("cuda")

local function ones(n)
  local s = {}
  for i = 1, n do s[i] = 1 end
  return s
end

local function refused(want, fn, ...)
  local ok, err = pcall(fn, ...)
  assert(not ok, want .. ": no error")
  assert(err:find(want, 1, true), err)
end

local too_many = "maximum supported dimension for an array is 64, found 65"
local start = os.clock()
for name, fn in pairs({ zeros = cuda.zeros, ones = cuda.ones, device_array = cuda.device_array,
                        rand = cuda.rand, host_array = cuda.host_array }) do
  refused("cuda." .. name .. ": bad argument #1 (" .. too_many .. ")", fn, ones(65))
end
refused("cuda.full: bad argument #1 (" .. too_many .. ")", cuda.full, ones(65), 2)
refused("cuda.zeros: bad argument #1 (maximum supported dimension for an array is 64, found 100000)", cuda.zeros, ones(100000))
refused("cuda.create_npy: bad argument #2 (" .. too_many .. ")", cuda.create_npy, tmpdir .. "/x.npy", ones(65))

local d = cuda.zeros(ones(64))
assert(d.ndim == 64 and #d.shape == 64 and d.size == 1)
local h = cuda.host_array({ 2 })
refused("DeviceArray:reshape: bad argument #1 (" .. too_many .. ")", d.reshape, d, ones(65))
local r = ones(65); r[1] = -1
refused("HostArray:reshape: bad argument #1 (" .. too_many .. ")", h.reshape, h, r)
local r64 = ones(64); r64[64] = 2
assert(h:reshape(r64).ndim == 64)
assert(d[1].ndim == 63)

-- a 64-dimension array prints as NumPy would: one bracket a dimension
assert(tostring(d):find(string.rep("[", 64) .. "0." .. string.rep("]", 64), 1, true), tostring(d))

-- an .npy header of 300,000 dimensions of size 1 is refused at once
local path = tmpdir .. "/dims.npy"
local dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" .. string.rep("1, ", 300000) .. "), }"
local header = dict .. string.rep(" ", (64 - (12 + #dict + 1) % 64) % 64) .. "\n"
local f = assert(io.open(path, "wb"))
local n = #header
f:write("\147NUMPY\2\0", string.char(n % 256, math.floor(n / 256) % 256, math.floor(n / 65536) % 256, 0), header, "\0\0\0\0")
f:close()
for _, opts in ipairs({ {}, { mmap = true } }) do
  refused("maximum supported dimension for an array is 64, found 300000", cuda.load_npy, path, opts)
end
d:save_npy(tmpdir .. "/d64.npy")
assert(cuda.load_npy(tmpdir .. "/d64.npy").ndim == 64)
assert(os.clock() - start < 5, "refusing and printing took " .. (os.clock() - start) .. " s")
