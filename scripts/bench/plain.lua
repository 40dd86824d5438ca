-- Plain Lua of the kind written around GPU calls, no GPU involved, to time
-- glua against the reference interpreter: lua51.sh beside this file runs
-- each kernel under both and times the whole process.
--   glua scripts/bench/plain.lua [kernel|all] [n]     (lua5.1 runs it too)
-- Each kernel prints one JSON line with a checksum, the same under both.
local which, n = arg[1] or "all", tonumber(arg[2])

local kernels = {}

-- A numeric loop: the arithmetic between GPU calls.
function kernels.numeric(n)
  local s = 0
  for i = 1, n do
    s = s + (i % 7) * 0.5 - (i % 3)
  end
  return s
end

-- Building strings: labels, file names, log lines.
function kernels.strings(n)
  local parts = {}
  for i = 1, n do
    parts[#parts + 1] = string.format("%d:%s", i, i % 2 == 0 and "even" or "odd")
  end
  return #table.concat(parts, ",")
end

-- table.concat of n one-character strings.
function kernels.concat(n)
  local t = {}
  for i = 1, n do
    t[i] = "a"
  end
  return #table.concat(t)
end

-- Inserting into and reading back a list.
function kernels.inserts(n)
  local t = {}
  for i = 1, n do
    table.insert(t, i * 2)
  end
  local s = 0
  for _, v in ipairs(t) do
    s = s + v
  end
  return s
end

-- Lua function calls: recursion.
function kernels.calls(n)
  local function fib(k)
    if k < 2 then return k end
    return fib(k - 1) + fib(k - 2)
  end
  return fib(n)
end

local defaults = { numeric = 10000000, strings = 1000000, concat = 1000000, inserts = 1000000, calls = 27 }
local order = { "numeric", "strings", "concat", "inserts", "calls" }

local function run(name)
  local size = n or defaults[name]
  local result = kernels[name](size)
  print(string.format('{"bench": "plain_lua", "kernel": "%s", "n": %d, "checksum": %.17g}', name, size, result))
end

if which == "all" then
  for _, name in ipairs(order) do
    run(name)
  end
elseif kernels[which] then
  run(which)
else
  error("plain.lua: no kernel " .. tostring(which) .. "; one of " .. table.concat(order, ", ") .. " or all")
end
