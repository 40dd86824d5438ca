-- Rank 1 raises an error where arg[1] says, while rank 0 goes on into a
-- collective that can never finish: "before" the group forms, "between"
-- two collectives, or "inside" one (rank 0 is waiting in it by then).
local dist, cuda = require("dist"), require("cuda")
local when = arg[1]
local function rankOneFails() error("rank one fails") end
if when == "before" and (os.getenv("GLUA_RANK") or os.getenv("RANK")) == "1" then rankOneFails() end
local x = cuda.zeros({1000})
if when == "between" then
  dist.all_reduce(x, "sum")
  if dist.rank() == 1 then rankOneFails() end
elseif when == "inside" and dist.rank() == 1 then
  local start = os.clock()
  while os.clock() - start < 0.5 do end
  rankOneFails()
end
dist.all_reduce(x, "sum")
dist.barrier()
print("rank " .. dist.rank() .. " should not get here")
