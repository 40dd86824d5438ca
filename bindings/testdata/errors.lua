-- Bad input: every entry point names itself and the problem, nothing live is
-- touched, and the runtime carries on.
local cuda = require("cuda")
local kernels = require("kernels")
local pool = require("pool")

local keep = cuda.to_device({ { 1, 2 }, { 3, 4 } })
local before = pool.stats().used

-- wrong types
check.error("cuda.to_device: bad argument #1 (table or HostArray expected, got string)", cuda.to_device, "x")
check.error("cuda.to_device: bad argument #1 (already a DeviceArray", cuda.to_device, keep)
check.error("kernels.fill: bad argument #1 (DeviceArray expected, got table)", kernels.fill, {}, 1)
check.error("kernels.fill: bad argument #2 (value must be a number, got string)", kernels.fill, keep, "one")
check.error("kernels.axpy: bad argument #3 (DeviceArray expected, got HostArray)", kernels.axpy, keep, 1, keep:copy_to_host())
check.error("kernels.matmul: bad argument #2 (DeviceArray expected, got nil)", kernels.matmul, keep)
check.error("DeviceArray:to_table: called on nil; call it as d:to_table(...)", keep.to_table)
check.error("HostArray expected, got DeviceArray", keep.copy_to_host, keep, keep)

-- a method called with a dot, or on another object, names itself and
-- says how to call it; a metamethod taken out of its metatable the same;
-- arguments of methods are counted after self, as Lua counts them
check.error("BatchIterator:close: called on nil; call it as it:close(...)", function() require("batch").iter({}).close() end)
local stream, event = cuda.stream(), cuda.event()
check.error("Stream:synchronize: called on nil; call it as s:synchronize(...)", stream.synchronize)
check.error("Event:record: called on Stream; call it as e:record(...)", event.record, stream)
check.error("Event:record: bad argument #1 (Stream expected, got number)", event.record, event, 5)
check.error("Event:elapsed: bad argument #1 (Event expected, got Stream)", event.elapsed, event, stream)
check.error("HostArray.__index: bad argument #1 (HostArray expected, got DeviceArray)",
  getmetatable(cuda.host_array({ 2 })).__index, cuda.zeros(2), 1)
check.error("DeviceArray.__len: bad argument #1 (DeviceArray expected, got HostArray)", getmetatable(keep).__len, cuda.host_array(2))
check.error("BatchIterator.__call: bad argument #1 (BatchIterator expected, got table)",
  getmetatable(require("batch").iter({})).__call, {})
check.error("-number: the operand must be a DeviceArray or a HostArray, not number", getmetatable(keep).__unm, 2)
check.error("kernels.fill: bad argument #1 (DeviceArray expected, got Stream)", kernels.fill, stream, 1)
check.error("DeviceArray:rows: bad argument #1 (first row must be an integer, got 1.5)", keep.rows, keep, 1.5, 2)
check.error("DeviceArray:rows: bad argument #2 (last row must be an integer, got nil)", keep.rows, keep, 1)
check.error("DeviceArray:copy_to_host: bad argument #1 (HostArray expected, got DeviceArray)", keep.copy_to_host, keep, keep)
check.error("DeviceArray:reshape: bad argument #1 (shape expected", keep.reshape, keep, "x")

-- ragged and non-numeric tables
check.error("ragged table: row [2] has 1 elements but the first at that depth has 2", cuda.to_device, { { 1, 2 }, { 3 } })
check.error("element [1][2] is a string, expected a number", cuda.to_device, { { 1, "2" } })
check.error("ragged table: element [2] is a number, expected a table", cuda.to_device, { { 1 }, 2 })
check.error("element [2] is a boolean", cuda.to_device, { 1, true })

-- tables that are not lists: a key other than 1..n, at any depth, or a
-- hole, is an error naming the first such key, never an array without it
local lists = "arrays are lists, keys 1..n only"
check.error("cuda.to_device: bad argument #1 (the table has key \"a\"; " .. lists .. ")", cuda.to_device, { a = 1 })
check.error("the table has key \"x\"", cuda.to_device, { 1, 2, x = 3 })
check.error("the table has key 0", cuda.to_device, { [0] = 0, 1, 2 })
check.error("the table has key 2.5", cuda.to_device, { 1, 2, [2.5] = 3 })
check.error("the table has a table as a key", cuda.to_device, { 1, [{}] = 2 })
check.error("row [2] has key \"n\"; " .. lists, cuda.to_device, { { 1, 2 }, { 3, 4, n = 2 } })
check.error("row [1][2] has key \"z\"", cuda.to_device, { { { 1 }, { 2, z = 0 } } })
check.error("cuda.to_device: bad argument #1 (element [2] is nil, a hole; " .. lists .. ")", cuda.to_device, { 1, nil, 3 })
check.error("element [2] is nil, a hole", cuda.to_device, { { 1 }, nil, { 3 } })
check.error("element [2][1] is nil, a hole", cuda.to_device, { { 1, 2 }, { nil, 4 } })
local sparse = {}
for i = 1, 10 do sparse[i] = i end
sparse[5] = nil
check.error("element [5] is nil, a hole", cuda.to_device, sparse)
check.error("DeviceArray:copy_from: bad argument #1 (the table has key \"n\"", keep.copy_from, keep, { { 1, 2 }, { 3, 4 }, n = 2 })
check.error("cuda.zeros: bad argument #1 (shape has key \"x\"; a shape is a list of dimensions, keys 1..n only)", cuda.zeros, { 2, x = 3 })
check.error("cuda.host_array: bad argument #1 (shape has key -1", cuda.host_array, { 2, [-1] = 3 })
check.error("shape has key \"n\"", keep.reshape, keep, { 4, n = 1 })
local batch = require("batch")
check.error("batch.iter: bad argument #1 (the list of batches has key \"x\"", batch.iter, { { { 1 } }, x = { { 2 } } })
check.error("the list of batches has a hole: batch 2 is nil", batch.iter, { { { 1 } }, nil, { { 2 } } })
check.error("batch.iter: batch 1: the batch has key \"y\"", function()
  for _ in batch.iter({ { { 1 }, y = { 2 } } }) do end
end)
check.error("batch.iter: batch 1: array 1: the table has key \"y\"", function()
  for _ in batch.iter({ { { 1, 2, y = 3 } } }) do end
end)
local noop = kernels.jit(function(x) end)
check.error("Kernel:launch: grid has key \"y\"; it is a list of up to 3 positive integers, keys 1..n only", noop.launch, noop,
  { grid = { 1, y = 2 }, block = 1 }, keep)
check.error("kernels.compile: options has key \"O\"; it is a list of strings, keys 1..n only", kernels.compile,
  "__global__ void k() {}", "k", { options = { "-lineinfo", O = 3 } })
-- what is a list stays one: trailing nils are no element, and {} is empty
local trailing = { 1, 2, 3 }
trailing[3] = nil
check.eq(cuda.to_device(trailing).size, 2, "a list whose last element was removed")
check.eq(cuda.to_device({}).size, 0, "an empty table")

-- shapes and sizes
check.error("cuda.device_array: bad argument #1 (shape[2] must be a non-negative integer, got -3)", cuda.device_array, { 2, -3 })
check.error("shape must be a non-negative integer or a table of them, got 2.5", cuda.zeros, 2.5)
check.error("shape must have at least one dimension", cuda.zeros, {})
check.error("shape[1] must be a number, got string", cuda.zeros, { "2" })
check.error("unknown dtype \"float\"", cuda.zeros, 4, "float")
check.error("dtype must be a string", cuda.zeros, 4, 32)
check.error("cuda.rand: rand needs a float dtype, got int32", cuda.rand, 4, "int32")
check.error("cuda.rand: bad argument #3 (seed must be an integer, got 1.5)", cuda.rand, 4, "float32", 1.5)
check.error("cannot reshape 2x2 (4 elements) to 3 (3 elements)", keep.reshape, keep, { 3 })
check.error("only one dimension may be -1", keep.reshape, keep, { -1, -1 })
-- a shape whose element count would wrap to 0 is refused, not taken for an
-- empty array's: 2^32 x 2^32 elements, and beside a -1
local empty, hempty = cuda.zeros({ 0 }), cuda.host_array({ 0 })
check.error("DeviceArray:reshape: shape 4294967296x4294967296 is too large", empty.reshape, empty, { 2 ^ 32, 2 ^ 32 })
check.error("HostArray:reshape: shape 4294967296x4294967296 is too large", hempty.reshape, hempty, { 2 ^ 32, 2 ^ 32 })
check.error("DeviceArray:reshape: shape 4294967296x4294967296x-1 is too large", empty.reshape, empty, { 2 ^ 32, 2 ^ 32, -1 })
check.eq(empty:reshape({ 2 ^ 20, 0, 2 ^ 40 }).size, 0, "an empty shape with large dimensions beside its 0")
check.error("rows 0 to 1 out of range: the array has rows 1 to 2", keep.rows, keep, 0, 1)
check.error("rows 2 to 3 out of range", keep.rows, keep, 2, 3)
check.error("first row must be an integer, got 1.5", keep.rows, keep, 1.5, 2)

-- host array indexing
local h = cuda.host_array(3)
check.error("HostArray[3]: index 4 out of range for shape 3 (indices run from 1 to 3)", function() return h[4] end)
check.error("HostArray[3]: index 0 out of range for shape 3 (indices run from 1 to 3)", function() h[0] = 1 end)
check.error("HostArray[3]: element must be a number, got string", function() h[1] = "x" end)
check.error("cannot set field shape", function() h.shape = 2 end)

-- transfers with the wrong shape or dtype
check.error("source is 3 but array is 2x2", keep.copy_from, keep, cuda.host_array(3))
check.error("source is float64 but array is float32", keep.copy_from, keep, cuda.host_array({ 2, 2 }, "float64"))
check.error("destination is 4 but array is 2x2", keep.copy_to_host, keep, cuda.host_array(4))

-- kernels with mismatched shapes and dtypes
local a3 = cuda.zeros(3)
check.error("kernels.add: y is 2x2 but x is 3; shapes must match", kernels.add, keep, a3)
check.error("kernels.axpy: y is float32 but x is float64; dtypes must match", kernels.axpy, a3, 1, cuda.zeros(3, "float64"))
check.error("kernels.copy: dst is 2x2 but src is 3", kernels.copy, keep, a3)
check.error("kernels.max_abs_diff: x is 2x2 but y is 3", kernels.max_abs_diff, keep, a3)

-- matmul: shapes, dtypes, options
local A = cuda.zeros({ 2, 3 })
local B = cuda.zeros({ 2, 3 })
local C = cuda.zeros({ 2, 3 })
check.error("kernels.matmul: A is 2x3 but B is 2x3; inner dimensions 3 and 2 differ", kernels.matmul, C, A, B)
check.error("C is 2x3 but A·Bᵀ is 2x2", kernels.matmul, C, A, B, { trans_b = true })
check.error("kernels.matmul: A is 2x3x1x1; matmul needs 2-D arrays", kernels.matmul, C, A:reshape({ 2, 3, 1, 1 }), B)
-- matrix-vector: the message names all three shapes
local v3, v2 = cuda.ones(3), cuda.ones(2)
check.error("kernels.matmul: C is 3, A is 2x3 and B is 3; A·B needs B of 3 and gives C of 2", kernels.matmul, v3, A, v3)
check.error("C is 2, A is 2x3 and B is 2; A·B needs B of 3 and gives C of 2", kernels.matmul, v2, A, v2)
check.error("C is 2, A is 2x3 and B is 2; Aᵀ·B needs B of 2 and gives C of 3", kernels.matmul, v2, A, v2, { trans_a = true })
check.error("C is 2, A is 3 and B is 2x3; A·B needs A of 2 and gives C of 3", kernels.matmul, v2, v3, B)
check.error("C is 2x1, A is 2x3 and B is 3; C must be 1-D when A or B is", kernels.matmul, cuda.zeros({ 2, 1 }), A, v3)
check.error("C is 2, A is 2x3 and B is 3x1; C must be 2-D", kernels.matmul, v2, A, cuda.zeros({ 3, 1 }))
check.error("C is 3, A is 3 and B is 3; matmul needs a matrix on one side", kernels.matmul, v3, v3, v3:clone())
check.error("trans_a and trans_b apply to a matrix, not to the vector", kernels.matmul, v2, A, v3, { trans_b = true })
check.eq(kernels.sum(v3) + kernels.sum(v2), 5, "vectors survive the errors")
check.error("A is float64, B is float32 and C is float32; dtypes must match", kernels.matmul, cuda.zeros({ 2, 2 }),
  cuda.zeros({ 2, 3 }, "float64"), B, { trans_b = true })
check.error("C is int32; matmul supports float32, float64, float16 and bfloat16", kernels.matmul,
  cuda.zeros({ 2, 2 }, "int32"), cuda.zeros({ 2, 3 }, "int32"), cuda.zeros({ 3, 2 }, "int32"))
check.error("unknown option alpah", kernels.matmul, cuda.zeros({ 2, 2 }), A, B, { alpah = 2, trans_b = true })
check.error("option beta must be a number, got string", kernels.matmul, cuda.zeros({ 2, 2 }), A, B, { beta = "1", trans_b = true })
check.error("unknown precision \"fp8\"", kernels.matmul, cuda.zeros({ 2, 2 }), A, B, { precision = "fp8", trans_b = true })
check.error("precision \"tf32\" applies to float32, not float64", kernels.matmul, cuda.zeros({ 2, 2 }, "float64"),
  cuda.zeros({ 2, 3 }, "float64"), cuda.zeros({ 3, 2 }, "float64"), { precision = "tf32" })
local sq = cuda.ones({ 3, 3 })
check.error("C shares memory with an input", kernels.matmul, sq, sq, cuda.ones({ 3, 3 }))

-- pool calls
check.error("pool.set_limit: bad argument #1 (table expected", pool.set_limit)
check.error("unknown option sfot", pool.set_limit, { sfot = "1GiB" })
check.error("\"lots\" is not a size", pool.set_limit, { hard = "lots" })
check.error("hard must be a size, a percentage or false, got true", pool.set_limit, { hard = true })
check.error("a percentage must be more than 0 and at most 100", pool.set_limit, { soft = "150%" })
check.error("pool.reclaim: bad argument #1", pool.reclaim, "many")
check.error("pool.scope: bad argument #1 (function expected, got nil)", pool.scope)
check.error("pool.free: bad argument #1 (DeviceArray expected, got number)", pool.free, 3)

-- after all of that, the live array is intact and the runtime works
check.eq(keep:to_table()[2][1], 3, "live array untouched")
local fresh = cuda.ones({ 2, 2 })
kernels.add(fresh, keep)
check.eq(fresh:to_table()[2][2], 5, "runtime usable")
fresh:free()
for _, x in ipairs({ a3, A, B, C, sq }) do x:free() end
collectgarbage()

-- numbers in messages are written as Lua 5.1 writes them ("%.14g")
check.error("shape must be a non-negative integer or a table of them, got 0.33333333333333", keep.reshape, keep, 1 / 3)
check.error("size must be a non-negative whole number of bytes, got 0.5", require("pool").reclaim, 0.5)
check.error("option prefetch must be a non-negative integer, got -inf", require("batch").iter, {}, { prefetch = -1 / 0 })
check.error("last row must be an integer, got 1e+100", keep.rows, keep, 1, 1e100)
local nan = check.error("alpha and beta must be numbers, got ", require("kernels").matmul, cuda.zeros({ 2, 2 }), keep, keep, { alpha = 0 / 0 })
assert(nan:find("got %-?nan and 0$"), nan)
