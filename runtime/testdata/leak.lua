-- A loop that keeps every array it makes, as a script that forgets to let
-- go of its results does: under a hard limit it runs out of memory, and
-- the error names line 8, where the memory went.
local cuda = require("cuda")
local scratch = cuda.zeros({ 256, 1024 }) -- 1 MiB, kept on purpose
local results = {}
for i = 1, 1000 do
  results[i] = cuda.zeros({ 1024, 1024 }) -- 4 MiB each, never freed
end
