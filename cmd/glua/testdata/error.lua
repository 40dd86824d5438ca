-- An error raised two calls deep.
local function inner(x)
  error("boom: " .. x)
end

local function outer()
  inner("deep")
end

print("before")
outer()
print("not reached")
