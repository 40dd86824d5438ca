-- Rank 1 fails at once; the others would leave a file behind after
-- arg[1] seconds if they were not stopped.
local rank = os.getenv("GLUA_RANK")
if rank == "1" then error("boom") end
print("ready")
io.stdout:flush()
local start = os.clock()
while os.clock() - start < tonumber(arg[1]) do end
io.open("survivor-" .. rank, "w"):close()
