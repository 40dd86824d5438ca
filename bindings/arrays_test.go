package bindings_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/luaindex"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden with what the code writes now")

// golden compares got with testdata/name, or, with -update, writes it there.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./bindings -run %s -update writes it)", err, t.Name())
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\ngot  %q\nwant %q\n(go test ./bindings -run %s -update rewrites it, to review with git diff)", path, i+1, gl[i], wl[i], t.Name())
			}
		}
		t.Fatalf("%s: got %d lines, want %d", path, len(gl), len(wl))
	}
}

// printed are arrays as scripts print them: each line of Lua an
// expression, whose tostring the golden file holds beneath it. NaNs are
// left to the conformance script: the sign of 0/0 is the machine's.
var printed = []string{
	`cuda.to_device({1, 2.5, -3})`,
	`cuda.to_device({{1, 2}, {3, 4}})`,
	`cuda.to_device({{{1, 2, 3}, {4, 5, 6}}, {{7, 8, 9}, {10, 11, 12}}}, "int32")`,
	`cuda.ones({2, 1, 2, 2}, "uint8")`,
	`cuda.to_device({1 / 3, 2 / 3, 1}, "float64")`,
	`cuda.to_device({0.5, 0.25})`,
	`cuda.to_device({0.1, 0.2, 0.3})`,
	`cuda.to_device({1e-5, 1, 1e5})`,
	`cuda.to_device({1e10, -2.5})`,
	`cuda.to_device({1 / 0, -1 / 0, 1.5})`,
	`cuda.to_device({1 / 3, 65504, -0.1}, "float16")`,
	`cuda.to_device({1 / 3, 3e38, -0.1}, "bfloat16")`,
	`cuda.to_device({-2147483648, 0, 2147483647}, "int32")`,
	`cuda.to_device({-2^53, 2^53}, "int64")`,
	`cuda.to_device({0, 7, 255}, "uint8")`,
	`cuda.rand(40, "float32", 1)`,
	`cuda.rand(1000000, "float32", 2)`,
	`cuda.rand({2000, 300}, "float64", 3)`,
	`cuda.rand({3, 5000}, "float32", 4)`,
	`cuda.rand({10, 20, 30}, "float32", 5)`,
	`cuda.rand({2, 2, 7, 300}, "float16", 6)`,
	`cuda.zeros(0)`,
	`cuda.zeros({2, 0, 3})`,
	`cuda.to_device({{1, 2}, {3, 4}, {5, 6}}):rows(2, 3)`,
	`(function() local a = cuda.ones({4, 4}); a:free(); return a end)()`,
	`cuda.host_array({2, 3})`,
	`cuda.host_array(3, "int64", {pinned = true})`,
	`cuda.rand({100, 100}, "float32", 7):copy_to_host()`,
}

// A printed array is its header and, beneath it, its elements as NumPy
// writes them with four decimals; a large one is summarised.
func TestPrintedArraysMatchTheGoldenFile(t *testing.T) {
	rt := newRuntime(t)
	mustDo(t, rt, `cuda = require("cuda")
		function show(src) return tostring(assert(loadstring("return " .. src))()) end`)
	var b strings.Builder
	for _, src := range printed {
		out, err := rt.Call("show", src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		b.WriteString("-- " + src + "\n" + out[0].(string) + "\n\n")
	}
	golden(t, "print.golden", b.String())
}

// Where luaindex cannot find the array a[i] indexes (another gopher-lua
// release), every array takes the generic metatable, whose __index is a
// Go function; indexing works the same.
func TestIndexingWorksThroughTheGenericMetatableAlone(t *testing.T) {
	defer func(was bool) { luaindex.Available = was }(luaindex.Available)
	luaindex.Available = false
	rt := newRuntime(t)
	if err := rt.DoFile(prelude); err != nil {
		t.Fatal(err)
	}
	if err := rt.DoFile(filepath.Join("testdata", "index.lua")); err != nil {
		t.Fatal(err)
	}
}

// Go code that indexes an array of a common shape through gopher-lua's
// API, where no Lua instruction names the array, is told to use the
// runtime's methods.
func TestIndexingFromGoNamesTheGoMethods(t *testing.T) {
	rt := newRuntime(t)
	mustDo(t, rt, `v = require("cuda").to_device({1, 2, 3})`)
	L := rt.Lua()
	L.Push(L.NewFunction(func(L *lua.LState) int {
		L.Push(L.GetTable(L.GetGlobal("v"), lua.LNumber(2)))
		return 1
	}))
	err := L.PCall(0, 1, nil)
	if err == nil || !strings.Contains(err.Error(), "DeviceArray[3]: d[i] is for Lua code; from Go, use Array.Get or Array.Row") {
		t.Errorf("got %v", err)
	}
}
