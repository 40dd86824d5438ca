-- Shared by the benchmark scripts: timing and one JSON line per measurement.
-- Loaded with dofile(dir .. "_bench.lua"); not a benchmark itself.
local cuda = require("cuda")
local M = {}

M.gpu = cuda.backend() == "cuda"

-- median of a list of numbers
function M.median(xs)
  table.sort(xs)
  local n = #xs
  if n % 2 == 1 then return xs[(n + 1) / 2] end
  return (xs[n / 2] + xs[n / 2 + 1]) / 2
end

-- device_time runs fn reps times per sample, samples times, after warmup
-- calls, and returns the median device seconds of one call.
function M.device_time(fn, reps, samples, warmup)
  for _ = 1, warmup or 2 do fn() end
  local times = {}
  for s = 1, samples or 5 do
    times[s] = cuda.timer(function() for _ = 1, reps do fn() end end) / reps
  end
  return M.median(times)
end

-- wall_time is like device_time with the host clock, synchronizing at the
-- end of each sample: the cost as a Lua loop sees it.
function M.wall_time(fn, reps, samples, warmup)
  for _ = 1, warmup or 2 do fn() end
  cuda.synchronize()
  local times = {}
  for s = 1, samples or 5 do
    local t0 = os.clock()
    for _ = 1, reps do fn() end
    cuda.synchronize()
    times[s] = (os.clock() - t0) / reps
  end
  return M.median(times)
end

-- emit prints one measurement as a JSON object on one line.
function M.emit(fields)
  local keys = {}
  for k in pairs(fields) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do
    local v = fields[k]
    if type(v) == "number" and (v ~= v or v == math.huge or v == -math.huge) then
      parts[#parts + 1] = string.format("%q: null", k) -- JSON has no NaN or infinity
    elseif type(v) == "number" and v == math.floor(v) and math.abs(v) < 2 ^ 53 then
      parts[#parts + 1] = string.format("%q: %d", k, v)
    elseif type(v) == "number" then
      parts[#parts + 1] = string.format("%q: %.6g", k, v)
    elseif type(v) == "boolean" then -- a check's outcome, JSON's true or false
      parts[#parts + 1] = string.format("%q: %s", k, tostring(v))
    else
      parts[#parts + 1] = string.format("%q: %q", k, tostring(v))
    end
  end
  print("{" .. table.concat(parts, ", ") .. "}")
end

function M.device_name() return cuda.device().name end

return M
