-- cuda.graph: work recorded once and replayed by g:launch(). On every
-- backend the capture runs nothing and each launch runs it all, on the
-- same arrays; it must give what the same steps give run one by one.
local cuda = require("cuda")
local kernels = require("kernels")
local pool = require("pool")
local batch = require("batch")

local n = 1000
local x = cuda.rand(n)
local y = cuda.rand(n)
local y0 = y:copy_to_host()
local xs = x:copy_to_host()

-- the reference: the same steps run eagerly on copies
local ry, rx = y:clone(), x:clone()
local function steps(yy, xx)
  kernels.axpy(yy, 0.5, xx)
  kernels.mul(yy, xx)
  kernels.add_scalar(yy, 1)
  kernels.map(function(v) return v / 2 end, yy, yy)
end

local made
local g = cuda.graph(function()
  steps(y, x)
  made = y:clone() -- an array made inside: each launch writes it again
end)
assert(tostring(g):find("^Graph"), tostring(g))
assert(made and made.size == n, "the array made inside is not there after the capture")
-- nothing ran at the capture
assert(y:copy_to_host()[1] == y0[1], "the capture ran the work")
assert(tostring(g):find("operations"), tostring(g))
local made_at_capture = made

for launch = 1, 3 do
  g:launch()
  steps(ry, rx)
end
cuda.synchronize()
assert(kernels.max_abs_diff(y, ry) == 0, "graph and eager steps differ: " .. kernels.max_abs_diff(y, ry))
assert(kernels.max_abs_diff(made, ry) == 0, "the array made inside the graph was not rewritten")
assert(made == made_at_capture, "a launch made a new array")
assert(kernels.max_abs_diff(x, rx) == 0)

-- a matmul in a graph
local A, B = cuda.rand({ 33, 17 }), cuda.rand({ 17, 9 })
local C = cuda.zeros({ 33, 9 })
local gm = cuda.graph(function() kernels.matmul(C, A, B) end)
gm:launch()
local R = cuda.zeros({ 33, 9 })
kernels.matmul(R, A, B)
assert(kernels.max_abs_diff(C, R) < 1e-5, "graph matmul differs")
gm:free()
gm:free() -- a second free is harmless
local ok, err = pcall(gm.launch, gm)
assert(not ok and tostring(err):find("Graph:launch: use of a freed graph", 1, true), tostring(err))

-- an element written in a graph is a one-element fill: each launch
-- writes it again, after the work recorded before it
local e = cuda.device_array(5, "int32")
kernels.fill(e, 7)
local ge = cuda.graph(function() kernels.add_scalar(e, 1); e[3] = -2; kernels.add_scalar(e, 1) end)
check.eq(table.concat(e:to_table(), " "), "7 7 7 7 7", "a capture ran its element write")
ge:launch()
check.eq(table.concat(e:to_table(), " "), "9 9 -1 9 9", "a graph's element write")
ge:launch()
check.eq(table.concat(e:to_table(), " "), "11 11 -1 11 11", "a graph's element write, launched again")
ge:free()
e:free()

-- work a graph cannot hold: an error naming the call, the runtime usable
local refused = {
  { "synchronizing", function() cuda.synchronize() end },
  { "kernels.sum: a reduction to a number", function() kernels.sum(x) end },
  { "a copy to the host", function() x:copy_to_host() end },
  { "a copy from the host", function() x:copy_from(xs) end },
  { "a copy from the host", function() cuda.to_device({ 1, 2, 3 }) end },
  { "a copy to the host", function() return x[1] end },
  { "timing", function() cuda.timer(function() end) end },
  { "a copy between host and device", function() for _ in batch.iter(batch.chunks(cuda.host_array({ 4, 2 }), 2)) do end end },
}
for _, case in ipairs(refused) do
  local ok, err = pcall(function()
    cuda.graph(function() kernels.scale(y, 1); case[2]() end)
  end)
  assert(not ok, case[1] .. " was captured")
  assert(tostring(err):find(case[1] .. " cannot be captured in a graph", 1, true), tostring(err))
  assert(not tostring(err):find("\n", 1, true), "more than one line: " .. tostring(err))
end
assert(kernels.max_abs_diff(y, ry) == 0, "a refused capture changed y")
assert(#x:copy_to_host() == n)

-- bad input
local ok, err = pcall(cuda.graph, 42)
assert(not ok and tostring(err):find("cuda.graph: bad argument #1 (function expected, got number)", 1, true), tostring(err))
ok, err = pcall(cuda.graph, function() end, 1)
assert(not ok and tostring(err):find("cuda.graph: bad argument #2", 1, true), tostring(err))
ok, err = pcall(function()
  cuda.graph(function() cuda.graph(function() end) end)
end)
assert(not ok and tostring(err):find("do not nest", 1, true), tostring(err))
local boom_line = debug.getinfo(1, "l").currentline + 1
ok, err = pcall(cuda.graph, function() error("boom") end)
local here = debug.getinfo(1, "S").source:gsub("^@", "")
check.eq(tostring(err), here .. ":" .. boom_line .. ": cuda.graph: " .. here .. ":" .. boom_line .. ": boom", "an error in fn")
-- a yield across the capture is refused
local co = coroutine.create(function() cuda.graph(function() coroutine.yield() end) end)
local cok, cerr = coroutine.resume(co)
assert(not cok and tostring(cerr):find("attempt to yield across", 1, true), tostring(cerr))

-- the memory of an array freed after the capture stays the graph's
local t = cuda.device_array(65536)
kernels.fill(t, 1)
local gt = cuda.graph(function() kernels.scale(t, 2) end)
t:free()
assert(pool.status():find("kept by graphs", 1, true), pool.status())
gt:launch() -- still safe: the memory is the graph's
gt:free()
g:free()
cuda.synchronize()
assert(not pool.status():find("Graphs:", 1, true), pool.status())
print("graph ok")
