package bindings_test

import (
	"fmt"
	"os"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

// benchLua times a Lua loop of b.N iterations whose body is body, with the
// setup run first. The reported ns/op is the cost of one body. The backend
// is the CPU unless GLUA_BENCH_BACKEND names another (cuda, on a GPU).
func benchLua(b *testing.B, setup, body string) {
	backend := os.Getenv("GLUA_BENCH_BACKEND")
	if backend == "" {
		backend = "cpu"
	}
	rt, err := runtime.New(runtime.Options{Backend: backend, Config: defaultConfig(), CPUMemory: "1GiB"})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	if err := rt.DoString(setup); err != nil {
		b.Fatal(err)
	}
	fn := fmt.Sprintf("return function(n) for i = 1, n do %s end end", body)
	if err := rt.DoString("bench_loop = (function() " + fn + " end)()"); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	if err := rt.DoString(fmt.Sprintf("bench_loop(%d)", b.N)); err != nil {
		b.Fatal(err)
	}
	// The work the loop queued belongs to its time.
	if err := rt.Synchronize(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkTinyKernelFromLua is the per-call cost of an in-place kernel on a
// one-element array from a Lua loop: all overhead, no work. Subtract
// BenchmarkEmptyLuaLoop's per-iteration cost to get glua's share.
func BenchmarkTinyKernelFromLua(b *testing.B) {
	benchLua(b, `kernels = require("kernels"); x = require("cuda").ones(1)`, `kernels.scale(x, 1.0)`)
}

// BenchmarkSmallMatmulFromLua is the per-call cost of kernels.matmul on
// matrices, and on a batch of them, small enough that the call is all
// overhead: what a loop of many small products pays beside the device.
func BenchmarkSmallMatmulFromLua(b *testing.B) {
	for _, shape := range []string{"{2, 2}", "{2, 2, 2}"} {
		b.Run(shape, func(b *testing.B) {
			benchLua(b, fmt.Sprintf(`kernels = require("kernels"); local cuda = require("cuda")
				A, B, C = cuda.rand(%[1]s), cuda.rand(%[1]s), cuda.device_array(%[1]s)`, shape), `kernels.matmul(C, A, B)`)
		})
	}
}

func BenchmarkEmptyLuaLoop(b *testing.B) {
	benchLua(b, `x = 1`, `x = x + 0`)
}

// BenchmarkArrayFieldsFromLua reads a field every array of a shape shares
// (a table lookup) and shape (a Go call making a table): what a[i]'s
// handling must not slow.
func BenchmarkArrayFieldsFromLua(b *testing.B) {
	benchLua(b, `x = require("cuda").zeros({4, 4})`, `local d, s = x.ndim, x.shape`)
}

// BenchmarkDeviceElementFromLua is A[i][j] of a device matrix: a row view
// and a download of one element.
func BenchmarkDeviceElementFromLua(b *testing.B) {
	benchLua(b, `A = require("cuda").zeros({4, 4})`, `local v = A[2][3]`)
}

// BenchmarkAllocFreeFromLua is cuda.device_array + free of 1 MiB from a Lua
// loop, served from the pool's cache.
func BenchmarkAllocFreeFromLua(b *testing.B) {
	benchLua(b, `cuda = require("cuda")`, `cuda.device_array(262144):free()`)
}

// BenchmarkAllocFreeFromLuaRecorded is BenchmarkAllocFreeFromLua while
// pool.record is on: the difference is what recording an allocation and
// a free costs.
func BenchmarkAllocFreeFromLuaRecorded(b *testing.B) {
	benchLua(b, `cuda = require("cuda"); require("pool").record(true)`, `cuda.device_array(262144):free()`)
}

// BenchmarkRandFreedFromLua and BenchmarkRandDroppedFromLua are the loop
// of scripts/bench/dropped.lua: a 1 MiB array made each iteration and
// freed, or dropped for the collector to find.
func BenchmarkRandFreedFromLua(b *testing.B) {
	benchLua(b, `cuda = require("cuda")`, `local t = cuda.rand({512, 512}); t:free()`)
}

func BenchmarkRandDroppedFromLua(b *testing.B) {
	benchLua(b, `cuda = require("cuda")`, `local t = cuda.rand({512, 512})`)
}

// BenchmarkAllocFreeFloor is the same Lua statement as
// BenchmarkAllocFreeFromLua against Go functions that do nothing: a
// function returning a userdata whose metatable's __index is a table of
// methods (as a DeviceArray's per-shape metatable is), and a method. It is
// what gopher-lua itself costs for the statement; the difference is glua's.
func BenchmarkAllocFreeFloor(b *testing.B) {
	L := lua.NewState()
	defer L.Close()
	methods := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"free": func(L *lua.LState) int { L.CheckUserData(1); return 0 },
	})
	mt := L.NewTable()
	L.SetField(mt, "__index", methods)
	L.SetGlobal("cuda", L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"device_array": func(L *lua.LState) int {
			L.CheckNumber(1)
			ud := L.NewUserData()
			ud.Metatable = mt
			L.Push(ud)
			return 1
		},
	}))
	b.ResetTimer()
	if err := L.DoString(fmt.Sprintf("for i = 1, %d do cuda.device_array(262144):free() end", b.N)); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkToDeviceFromTable and BenchmarkToDeviceFromNestedTable are
// cuda.to_device of a Lua list of 1024 numbers and of a 32x32 nested one:
// the reading and checking of the table is most of it.
func BenchmarkToDeviceFromTable(b *testing.B) {
	benchLua(b, `cuda = require("cuda"); t = {}; for i = 1, 1024 do t[i] = i end`, `cuda.to_device(t):free()`)
}

func BenchmarkToDeviceFromNestedTable(b *testing.B) {
	benchLua(b, `cuda = require("cuda"); t = {}
		for i = 1, 32 do t[i] = {}; for j = 1, 32 do t[i][j] = i * j end end`, `cuda.to_device(t):free()`)
}

// BenchmarkCopyFromTable is d:copy_from of a list of 4 numbers: the
// per-call cost a small upload in a loop pays.
func BenchmarkCopyFromTable(b *testing.B) {
	benchLua(b, `d = require("cuda").zeros(4); t = {1, 2, 3, 4}`, `d:copy_from(t)`)
}
