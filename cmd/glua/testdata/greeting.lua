-- A module for -l: it counts its loads and returns a table.
greeting_loads = (greeting_loads or 0) + 1
print("loading greeting", ...)
return { hello = function(name) return "hello, " .. name end }
