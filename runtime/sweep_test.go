package runtime_test

import (
	"errors"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

// The loop: with no limit, dropped arrays are found by walking the
// Lua state at the trigger, so the pool holds one trigger's worth (16 MiB)
// where walks are cheap, and four at most where they are slow enough to be
// spaced out (a loaded machine, the race detector).
func TestDroppedArraysPeakAtOneTrigger(t *testing.T) {
	rt := newCPU(t, runtime.Options{CPUMemory: "2GiB"})
	err := rt.DoString(`
		local cuda, pool = require("cuda"), require("pool")
		for i = 1, 1000 do local t = cuda.rand({512, 512}) end
		local s = pool.stats()
		assert(s.peak_used <= 64 * 2^20, "dropped arrays piled up to " .. s.peak_used / 2^20 .. " MiB")
		assert(s.live_arrays <= 64, s.live_arrays .. " arrays live after the loop")`)
	if err != nil {
		t.Fatal(err)
	}
}

// A large Lua heap makes each walk slow; walks are then spaced out, and
// the pool still holds at most four triggers' worth.
func TestWalksOfALargeHeapAreSpacedOut(t *testing.T) {
	rt := newCPU(t, runtime.Options{CPUMemory: "2GiB"})
	err := rt.DoString(`
		local cuda, pool = require("cuda"), require("pool")
		big = {}
		for i = 1, 300000 do big[i] = { i } end
		for i = 1, 300 do local t = cuda.device_array({512, 512}) end
		local peak = pool.stats().peak_used / 2^20
		assert(peak <= 4 * 16, "dropped arrays piled up to " .. peak .. " MiB")`)
	if err != nil {
		t.Fatal(err)
	}
}

// Every place a script can keep an array keeps it through many walks, and
// its data with it; only what nothing refers to is freed.
func TestWalksFreeOnlyWhatNothingRefersTo(t *testing.T) {
	rt := newCPU(t, runtime.Options{CPUMemory: "2GiB"})
	err := rt.DoString(`
		local cuda, kernels, pool = require("cuda"), require("kernels"), require("pool")
		local function filled(v) local a = cuda.zeros({64, 64}); kernels.fill(a, v); return a end
		kept_global = filled(1)
		local t = { filled(2), key = filled(3) }
		t[filled(4)] = true
		local up = filled(5)
		local function get_up() return up end
		local closed = (function() local c = filled(6); return function() return c end end)()
		local co = coroutine.create(function() local x = filled(7); coroutine.yield(); return x end)
		coroutine.resume(co)
		local mt_held = setmetatable({}, { held = filled(8) })
		getmetatable("").glua_test = filled(9)
		local base = filled(10)
		local view = base:reshape({4096}); base = nil   -- a view keeps its base's memory
		local rows = filled(11):rows(1, 2)               -- so does a view of a dropped array
		for i = 1, 200 do local d = cuda.rand({512, 512}) end   -- 200 MiB dropped: many walks
		local function check(a, v, what)
			assert(not a:is_freed(), what .. " was freed")
			assert(kernels.sum(a) == v * a.size, what .. " lost its data")
		end
		check(kept_global, 1, "a global"); check(t[1], 2, "a list item"); check(t.key, 3, "a field")
		local k = next(t, nil); for key in pairs(t) do if type(key) ~= "number" and key ~= "key" then k = key end end
		check(k, 4, "a table key"); check(get_up(), 5, "an open upvalue"); check(closed(), 6, "a closed upvalue")
		local _, x = coroutine.resume(co); check(x, 7, "a coroutine's local")
		check(getmetatable(mt_held).held, 8, "a metatable's field"); check(getmetatable("").glua_test, 9, "the string metatable")
		check(view, 10, "a view's base"); check(rows, 11, "a rows view's base")
		getmetatable("").glua_test = nil
		assert(pool.stats().live_arrays <= 11 + 16, pool.stats().live_arrays .. " arrays live")`)
	if err != nil {
		t.Fatal(err)
	}
}

// Go code that keeps a script's array past the call without Keep gets a
// clear error once the script drops it, never a crash; with Keep the
// array lives on.
func TestGoCodeKeepsAScriptsArrayWithKeep(t *testing.T) {
	rt := newCPU(t, runtime.Options{CPUMemory: "2GiB"})
	var kept, unkept *runtime.Array
	rt.Lua().SetGlobal("hold", rt.Lua().NewFunction(func(L *lua.LState) int {
		kept = L.CheckUserData(1).Value.(*runtime.Array)
		rt.Keep(kept)
		unkept = L.CheckUserData(2).Value.(*runtime.Array)
		return 0
	}))
	err := rt.DoString(`
		local cuda = require("cuda")
		hold(cuda.zeros({8}), cuda.zeros({8}))
		for i = 1, 100 do local d = cuda.rand({512, 512}) end`)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Fill(kept, 2); err != nil {
		t.Fatalf("an array Go kept: %v", err)
	}
	err = rt.Fill(unkept, 2)
	if !errors.Is(err, runtime.ErrFreed) || !strings.Contains(err.Error(), "Keep") {
		t.Fatalf("an array Go held without Keep: %v, want a freed-array error naming Keep", err)
	}
}

// A userdata the walk cannot see into (a host's type holding an
// interface) leaves the dropped arrays to Go's collector, which the
// runtime still paces by device memory.
func TestAnUnknownUserdataFallsBackToGosCollector(t *testing.T) {
	rt := newCPU(t, runtime.Options{CPUMemory: "2GiB"})
	L := rt.Lua()
	ud := L.NewUserData()
	ud.Value = struct{ anything any }{}
	L.SetGlobal("opaque", ud)
	err := rt.DoString(`
		local cuda, pool = require("cuda"), require("pool")
		for i = 1, 1000 do local t = cuda.rand({512, 512}) end
		local peak = pool.stats().peak_used / 2^20
		assert(peak <= 256, "dropped arrays piled up to " .. peak .. " MiB")`)
	if err != nil {
		t.Fatal(err)
	}
}

// Arrays Go code makes and drops are Go's collector's to find: walking
// the Lua state cannot see Go's variables.
func TestArraysGoDropsAreStillCollected(t *testing.T) {
	rt := newCPU(t, runtime.Options{CPUMemory: "2GiB"})
	for range 1000 {
		if _, err := rt.Rand([]int{512, 512}, runtime.Float32, nil); err != nil {
			t.Fatal(err)
		}
	}
	if peak := rt.Stats().PeakUsed >> 20; peak > 256 {
		t.Fatalf("arrays Go dropped piled up to %d MiB", peak)
	}
}

// walkScript keeps arrays in random places (globals, fields, keys, closed
// and open upvalues, a suspended coroutine, metatables, views), replaces
// and drops them at random among allocations that start walks, and then
// checks that every array still referred to kept its memory and data.
const walkScript = `
local seed, steps = ...
local cuda, kernels = require("cuda"), require("kernels")
math.randomseed(seed)
local want = {}         -- slot -> fill value; numbers only, so it holds no array
local slots, store = {}, {}
local function new(v) local a = cuda.zeros({math.random(1, 300)}); kernels.fill(a, v); return a end
local kinds = {
  function(i, a) _G["g" .. i] = a end,
  function(i, a) store[i] = a end,
  function(i, a) local keyed = {}; keyed[a or {}] = true; store[i] = keyed end,
  function(i, a) store[i] = (function() local c = a; return function() return c end end)() end,
  function(i, a) store[i] = setmetatable({}, { held = a }) end,
  function(i, a) store[i] = a and a:reshape({a.size, 1}) end,
  function(i, a)
    local co = coroutine.create(function(x) coroutine.yield(); return x end)
    coroutine.resume(co, a); store[i] = co
  end,
}
local function get(i, kind)
  if kind == 1 then return _G["g" .. i] end
  local s = store[i]
  if kind == 2 or kind == 6 then return s end
  if kind == 3 then for k in pairs(s) do if type(k) ~= "table" then return k end end return nil end
  if kind == 4 then return s() end
  if kind == 5 then return getmetatable(s).held end
  local _, x = coroutine.resume(s); return x
end
for step = 1, steps do
  local i = math.random(1, 12)
  local kind = math.random(1, #kinds)
  local v = step
  local a = math.random() < 0.8 and new(v) or nil
  slots[i] = kind
  want[i] = a and v or nil
  kinds[kind](i, a)
  if kind == 7 then want[i] = a and v or nil end
  for j = 1, math.random(0, 6) do local d = cuda.rand({512, 512}) end
  if math.random() < 0.1 then collectgarbage() end
end
for i, kind in pairs(slots) do
  local a = get(i, kind)
  if want[i] then
    assert(a, "slot " .. i .. " lost its array")
    assert(not a:is_freed(), "slot " .. i .. " (kind " .. kind .. ") was freed")
    assert(kernels.sum(a) == want[i] * a.size, "slot " .. i .. " lost its data")
  end
end
`

func FuzzWalksKeepReachableArrays(f *testing.F) {
	for _, seed := range []int64{1, 2, 3, 42, 1234} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		rt := newCPU(t, runtime.Options{CPUMemory: "2GiB"})
		fn, err := rt.Lua().LoadString(walkScript)
		if err != nil {
			t.Fatal(err)
		}
		L := rt.Lua()
		L.Push(fn)
		L.Push(lua.LNumber(seed % 1000000))
		L.Push(lua.LNumber(60))
		if err := L.PCall(2, 0, nil); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	})
}
