-- error() with values that are not strings.
local kind = ...
if kind == "nil" then
  error(nil)
elseif kind == "table" then
  error({ code = 7 })
elseif kind == "level0" then
  error("no position", 0)
end
