-- A name a module or an object lacks is an error that names it, suggests
-- the nearest name, and lists those that exist; Lua's nil would surface
-- later as "attempt to call a nil value" naming nothing.
local cuda, kernels, pool, batch = require("cuda"), require("kernels"), require("pool"), require("batch")

local A = cuda.zeros({ 2, 3 })
local fields = "(fields: shape, dtype, size, nbytes, ndim; methods: clone, copy_from, copy_to_host, free, is_freed, reshape, rows, save_npy, to_table)"
check.error("DeviceArray has no field or method 'shpe'; did you mean 'shape'? " .. fields, function() return A.shpe end)
check.error("DeviceArray has no field or method 'T' " .. fields, function() return A.T end)
check.error("DeviceArray has no field or method 'copy_to_hots'; did you mean 'copy_to_host'?", function() return A:copy_to_hots() end)
check.error("DeviceArray has no field or method 'Free'; did you mean 'free'?", function() A:Free() end)
local big = cuda.zeros({ 1, 1, 1, 1, 2 }) -- more than four dimensions: the generic metatable, the same errors
check.error("DeviceArray has no field or method 'ndims'; did you mean 'ndim'? " .. fields, function() return big.ndims end)
check.error("DeviceArray: cannot set field shape; only elements can be set, x[i] = v", function() A.shape = { 3, 2 } end)

local h = cuda.host_array(3)
check.error("HostArray has no field or method 'pined'; did you mean 'pinned'? (fields: shape, dtype, size, nbytes, ndim, pinned, mapped; methods: flush, reshape, rows, save_npy, to_table)",
  function() return h.pined end)
check.error("HostArray has no field or method 'to_tabel'; did you mean 'to_table'?", function() return h:to_tabel() end)

local s, e = cuda.stream(), cuda.event()
check.error("Stream has no method 'sync' (methods: synchronize)", function() s:sync() end)
check.error("Event has no method 'recrod'; did you mean 'record'? (methods: elapsed, query, record, synchronize)", function() e:recrod() end)
local it = batch.iter({ { { 1 } } })
check.error("BatchIterator has no method 'clos'; did you mean 'close'? (methods: close)", function() it:clos() end)
it:close()
if cuda.backend() == "cuda" then
  local k = kernels.compile('extern "C" __global__ void nop(float *x) {}', "nop")
  check.error("Kernel has no method 'lanch'; did you mean 'launch'? (methods: launch)", function() k:lanch({ grid = 1, block = 1 }, A) end)
end

-- modules: the same, with their functions listed
local err = check.error("module 'cuda' has no field 'zero'; did you mean 'zeros'? (functions: backend, create_npy, device, device_array, devices, event, full,",
  function() return cuda.zero({ 2 }) end)
assert(err:find("zeros)", 1, true), err)
check.error("module 'kernels' has no field 'matmull'; did you mean 'matmul'?", function() return kernels.matmull end)
check.error("module 'pool' has no field 'stat'; did you mean 'stats'?", function() return pool.stat end)
check.error("module 'batch' has no field 'iterate' (functions: chunks, find_size, iter, matmul)", function() return batch.iterate end)
check.error("module 'cuda' has no field number 1", function() return cuda[1] end)

-- the tables are as before for pairs, rawget and assignment
local n = 0
for name, fn in pairs(pool) do n = n + 1; check.eq(type(fn), "function", "pool." .. name) end
check.eq(n > 10, true, "pairs(pool) lists its functions")
check.eq(rawget(cuda, "zero"), nil, "rawget probes without an error")
check.eq(rawget(cuda, "zeros"), cuda.zeros, "rawget finds what exists")
cuda.helper = function() return 42 end
check.eq(cuda.helper(), 42, "a module takes new fields")
check.error("(functions: backend,", function() return cuda.helpr end)
cuda.helper = nil

-- nothing is harmed by the errors
check.eq(A:to_table()[2][3], 0, "A after the errors")
check.eq(h[3], 0, "h after the errors")
