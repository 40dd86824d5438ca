-- Each rank says where it stands, in pieces and on both outputs, so that
-- a test can see every line arrive whole and prefixed.
local function env(name) return tostring(os.getenv(name)) end
print("rank " .. env("GLUA_RANK") .. " of " .. env("GLUA_WORLD_SIZE") .. " local " .. env("GLUA_LOCAL_RANK")
  .. " device " .. env("GLUA_DEVICE") .. " at " .. env("NCCL_COMM_ID") .. " args " .. table.concat(arg, ","))
io.write("written ") io.write("in ") io.write("pieces\n")
io.stderr:write("rank " .. env("GLUA_RANK") .. " on stderr\n")
io.write("no newline at the end")
