-- The assertions every conformance script may use. They live in Lua so
-- that a failure reports the script's own line; the runner also sets
-- tmpdir, a directory of the script's own for files it writes.
check = {}
function check.error(pattern, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then error("expected an error matching '" .. pattern .. "', got success", 2) end
  if not string.find(tostring(err), pattern, 1, true) then
    error("expected an error containing '" .. pattern .. "', got: " .. tostring(err), 2)
  end
  return err
end
function check.eq(got, want, what)
  if got ~= want then error(string.format("%s: got %s, want %s", what or "value", tostring(got), tostring(want)), 2) end
end
function check.near(got, want, tol, what)
  if not (math.abs(got - want) <= tol * math.max(1, math.abs(want))) then
    error(string.format("%s: got %.9g, want %.9g (tolerance %g)", what or "value", got, want, tol), 2)
  end
end
-- rel is ||x - y|| / ||y|| computed on the device.
function check.rel(x, y)
  local d = x:clone()
  require("kernels").axpy(d, -1, y)
  local r = require("kernels").norm(d) / require("kernels").norm(y)
  d:free()
  return r
end
tolerance = { float32 = 1e-5, float64 = 1e-12, float16 = 1e-2, bfloat16 = 1e-2, tf32 = 5e-3 }
