-- Prints the arg table from its lowest index, then the script's varargs.
local first = 0
while arg[first - 1] ~= nil do
  first = first - 1
end
for i = first, #arg do
  print(i, arg[i])
end
print("...", select("#", ...), ...)
