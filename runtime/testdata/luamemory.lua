-- Each way a script makes memory grow ends in "not enough memory", an
-- error pcall catches, under the runtime's Lua memory limit (64 MiB in
-- TestLuaMemoryLimitStopsEveryWayOfGrowing).
local function refused(name, f)
  local ok, err = pcall(f)
  assert(not ok, name .. " ran to the end")
  assert(type(err) == "string" and err:find("^not enough memory"), name .. ": " .. tostring(err))
  assert(err:find("Lua memory limit of 64 MiB", 1, true), name .. ": the message names no limit: " .. err)
  assert(err:find("--lua-memory-limit", 1, true), name .. ": the message names no setting: " .. err)
  collectgarbage()
end

refused("string.rep", function() return string.rep("x", 2^31 - 1) end)
refused("a method call of rep", function() return ("xy"):rep(2^30) end)
refused("doubling with ..", function() local s = "x" while true do s = s .. s end end)
refused("table.concat", function() local s = ("y"):rep(1e6) while true do s = table.concat({s, s}, "-") end end)
refused("gsub", function() local s = ("z"):rep(1e4) return s:gsub("z", s) end)
refused("gsub with a function", function() local s = ("z"):rep(1e4) return s:gsub("z", function() return s end) end)
refused("string.format", function() local s = ("f"):rep(4e7) return string.format("%s%s", s, s) end)
refused("upper", function() local s = ("u"):rep(4e7) local t = {s:upper(), s:lower(), s:reverse()} end)
refused("a table grown without end", function() local t = {} while true do t[#t + 1] = {} end end)
refused("a list of numbers", function() local t = {} for i = 1, 1e12 do t[i] = i end end)
refused("strings kept in a table", function() local t = {} for i = 1, 1e12 do t[i] = ("x"):rep(1000) .. i end end)
refused("coroutines", function() local cs = {} for i = 1, 1e9 do cs[i] = coroutine.create(function() end) end end)
refused("loadstring", function() return loadstring(("x=1 "):rep(1e7)) end)
refused("tail calls", function() local function grow(t) t[#t + 1] = {} return grow(t) end grow({}) end)

-- Nothing was lost: the state goes on, and its memory is back.
local t = {}
for i = 1, 1e5 do t[i] = {i} end
assert(#t == 1e5 and t[1e5][1] == 1e5)
assert(#string.rep("ab", 1e6) == 2e6)
print("ok")
