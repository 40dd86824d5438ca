-- print through the global tostring: run by lua51_test.go
-- beside lua5.1.
print(1, "a", nil, true, 2.5, 1e100)
print(pcall(print, 1, setmetatable({}, {__tostring = function() return {} end})))
print(setmetatable({}, {__tostring = function() return 42 end}))
local old = tostring
tostring = function(v) return "<" .. old(v) .. ">" end
print(1, "x")
tostring = nil
print(pcall(print, 1))
