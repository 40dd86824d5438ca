-- try(label, fn, ...) calls fn and says, on one transcript line, "label: ok"
-- or "label: " and the error it raised. The runner defines say.
function try(label, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then say(label .. ": ok") else say(label .. ": " .. tostring(err)) end
end
