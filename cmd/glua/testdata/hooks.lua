-- debug.sethook and debug.gethook, line and count events: run by
-- lua51_test.go beside lua5.1, which must print the same. Each event is
-- recorded with the line the hook's caller reports, so that the trace
-- also checks each instruction's line and how many instructions run.
local events = {}
local function record(e, l)
  events[#events + 1] = e:sub(1, 1) .. (l or debug.getinfo(2, "l").currentline)
end
local function show(what)
  print(what, table.concat(events, " "))
  events = {}
end

local function f(x)
  local y = x + 1
  return y * 2
end
local function g(n)
  local s = 0
  for i = 1, n do
    s = s + f(i)
  end
  return s
end
local fs = {}

-- lines: a function's first instruction, a jump back, a new line; a call
-- returning to its line is no new line
debug.sethook(record, "l")
local a = g(2)
local b = f(1) + f(2)
if a > 0 then
  a = a + 1
elseif b then
  a = 0
end
local t = {1, 2,
  3}
local s = "a" ..
  "b"
print(pcall(function()
  local q = 1
  return q
end))
while a > 10 and
  b do
  a = a - 1
end
for k, v in pairs({x = 1}) do
  fs[#fs + 1] = function() return k .. v end
end
repeat
  local r = a
  fs[#fs + 1] = function() return r end
  a = a - 1
until a < 8
debug.sethook()
show("lines")

-- counts: every 3rd instruction, the hook's own instructions counted too
debug.sethook(record, "", 3)
for i = 1, 5 do
  local z = i * 2
  if z > 4 then z = f(z) end
end
debug.sethook()
show("count 3")

-- both, with moves fused by the compiler and tests that jump
debug.sethook(record, "l", 2)
local p, q, r = a, b, s
local u = (p and q) or r
print(p, q, r, u ~= nil)
debug.sethook()
show("lines and count 2")

-- every instruction, moves on lines of their own included
debug.sethook(record, "", 1)
local m1 = a
local m2 = m1
local m3 = m1
debug.sethook()
show("count 1")

-- gethook, and what sethook's arguments are
print(debug.gethook())
debug.sethook(record, "l", 4)
local hook, mask, count = debug.gethook()
debug.sethook()
show("set and read")
print(hook == record, mask, count)
debug.sethook(record, "", 0)
hook, mask, count = debug.gethook()
print(hook == record, mask, count)
debug.sethook()
print(debug.gethook())
print(pcall(debug.sethook, 1, 2))
print(pcall(debug.sethook, record))
print(pcall(debug.sethook, record, "l", "x"))

-- a coroutine's own hook; the main thread's is not it
local co = coroutine.create(function(x)
  local y = x
  coroutine.yield(y)
  return y + 1
end)
debug.sethook(co, record, "l")
print(coroutine.resume(co, 1))
print(coroutine.resume(co))
print(debug.gethook(co) == record, debug.gethook())
show("coroutine")
-- a thread made under a hook takes its events but not its function
debug.sethook(record, "l", 5)
local made = coroutine.create(function() return 1 end)
debug.sethook()
show("made under a hook")
print(debug.gethook(made))
print(coroutine.resume(made))

-- the hook's caller, named, and no events while the hook runs
debug.sethook(function(e, l)
  local info = debug.getinfo(2, "nS")
  events[#events + 1] = l .. ":" .. tostring(info.name) .. ":" .. info.what
end, "l")
local c = f(5)
debug.sethook()
show("caller")

-- an error in a hook is the running code's error
local target
debug.sethook(function(e, l) if l == target then error("in hook") end end, "l")
target = debug.getinfo(1, "l").currentline + 2
local ok, err = pcall(function()
  local w = 1
  return w
end)
debug.sethook()
print(ok, err)
