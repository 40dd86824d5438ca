-- The messages of an __index or __newindex loop:
-- run by lua51_test.go beside lua5.1.
local t = {}
for i = 1, 150 do t = setmetatable({}, {__index = t}) end
print(pcall(function() return t.x end))
local u = {}
for i = 1, 150 do u = setmetatable({}, {__newindex = u}) end
print(pcall(function() u.x = 1 end))
local g = setmetatable({}, {__index = function(t, k) return t[k] end})
print(pcall(function() return rawget(g, "x") end))
print(pcall(function() local v = u; v.y = 2 end))
