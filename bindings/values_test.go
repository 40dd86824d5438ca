package bindings_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

func newRuntime(t *testing.T) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.New(runtime.Options{Backend: "cpu", Config: defaultConfig(), CPUMemory: "64MiB"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func mustDo(t *testing.T, rt *runtime.Runtime, src string) {
	t.Helper()
	if err := rt.DoString(src); err != nil {
		t.Fatal(err)
	}
}

// An array Go hands to a script is the script's to use and Go's to keep:
// the script sees the same memory, and dropping it frees nothing.
func TestAnArrayGoSetsIsSharedAndStaysGos(t *testing.T) {
	rt := newRuntime(t)
	x, err := rt.Full([]int{3}, 2, runtime.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.SetGlobal("x", x); err != nil {
		t.Fatal(err)
	}
	mustDo(t, rt, `
		assert(tostring(x) == "DeviceArray<float32>[3] 12 B\n[2., 2., 2.]", tostring(x))
		require("kernels").scale(x, 5)
		x = nil
		collectgarbage()`)
	got, err := x.Float64s()
	if err != nil {
		t.Fatalf("Go's array after the script dropped it: %v", err)
	}
	if fmt.Sprint(got) != "[10 10 10]" {
		t.Fatalf("x = %v after the script scaled it by 5", got)
	}
}

// What Go takes from a script (a global, a result, or either inside a
// table) is Go's from then on: the script dropping it frees nothing, while
// an array Go did not take is freed as before.
func TestArraysGoTakesSurviveTheScriptDroppingThem(t *testing.T) {
	rt := newRuntime(t)
	mustDo(t, rt, `
		local cuda = require("cuda")
		y = cuda.full({2}, 7)
		t = {inner = {cuda.full({2}, 8)}}
		untaken = cuda.full({2}, 9)
		function make() return cuda.full({2}, 10), {cuda.full({2}, 11)} end`)
	y, err := rt.Global("y")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := rt.Global("t")
	if err != nil {
		t.Fatal(err)
	}
	untaken := rt.Lua().GetGlobal("untaken").(*lua.LUserData).Value.(*runtime.Array)
	results, err := rt.Call("make")
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, rt, `y, t, untaken, make = nil, nil, nil, nil; collectgarbage()`)

	inner := tbl.(*lua.LTable).RawGetString("inner").(*lua.LTable).RawGetInt(1).(*lua.LUserData).Value.(*runtime.Array)
	inResult := results[1].(*lua.LTable).RawGetInt(1).(*lua.LUserData).Value.(*runtime.Array)
	for _, c := range []struct {
		name string
		a    *runtime.Array
		want float64
	}{{"global", y.(*runtime.Array), 7}, {"array in a global table", inner, 8}, {"result", results[0].(*runtime.Array), 10}, {"array in a result table", inResult, 11}} {
		got, err := c.a.Float64s()
		if err != nil || got[0] != c.want {
			t.Errorf("%s after the script dropped it: %v, %v", c.name, got, err)
		}
	}
	if !untaken.IsFreed() {
		t.Error("an array Go never took was not freed when the script dropped it: the test shows nothing")
	}
}

func TestCallConvertsArgumentsAndResults(t *testing.T) {
	rt := newRuntime(t)
	mustDo(t, rt, `
		function describe(...)
			local out = {}
			for i = 1, select("#", ...) do
				local v = select(i, ...)
				out[#out + 1] = type(v) == "userdata" and tostring(v) or type(v) .. " " .. tostring(v)
			end
			return table.concat(out, ", ")
		end
		function values() return 1.5, "s", true, nil, require("cuda").host_array(2), {1} end`)
	h, _ := runtime.HostArrayFromFloats([]float64{1, 2}, []int{2}, runtime.Float64)
	got, err := rt.Call("describe", 1, int64(-3), uint8(4), float32(0.5), "a", false, nil, h, []float64{1, 2, 3}, []float32{4})
	if err != nil {
		t.Fatal(err)
	}
	want := "number 1, number -3, number 4, number 0.5, string a, boolean false, nil nil, HostArray<float64>[2] 16 B\n[1., 2.], HostArray<float64>[3] 24 B\n[1., 2., 3.], HostArray<float32>[1] 4 B\n[4.]"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("describe(...) = %#v\nwant %q", got, want)
	}
	got, err = rt.Call("values")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 || got[0] != 1.5 || got[1] != "s" || got[2] != true || got[3] != nil {
		t.Fatalf("values() = %#v", got)
	}
	if _, ok := got[4].(*runtime.HostArray); !ok {
		t.Errorf("a HostArray came back as %T", got[4])
	}
	if _, ok := got[5].(*lua.LTable); !ok {
		t.Errorf("a table came back as %T", got[5])
	}
	if v, err := rt.Global("never_set"); v != nil || err != nil {
		t.Errorf("Global of an unset name = %v, %v; want nil, nil", v, err)
	}
}

// A []float64 is copied: the script's changes do not reach the slice.
func TestSlicesArePassedAsCopies(t *testing.T) {
	rt := newRuntime(t)
	s := []float64{1, 2}
	if err := rt.SetGlobal("s", s); err != nil {
		t.Fatal(err)
	}
	mustDo(t, rt, `s[1] = 100; assert(s[1] == 100 and s.dtype == "float64")`)
	if s[0] != 1 {
		t.Fatalf("the script's write reached the Go slice: %v", s)
	}
}

var errNegative = errors.New("negative input")

// A Go function set as a global is called by scripts with converted
// arguments; its error is a Lua error naming it, and a host sees the
// error itself.
func TestScriptsCallGoFunctions(t *testing.T) {
	rt := newRuntime(t)
	err := rt.SetGlobal("twice", runtime.Func(func(args ...any) ([]any, error) {
		x, ok := args[0].(*runtime.Array)
		if !ok {
			return nil, fmt.Errorf("argument 1 must be a DeviceArray, got %T", args[0])
		}
		if f, _ := args[1].(float64); f < 0 {
			return nil, errNegative
		}
		return []any{x, rt.Scale(x, 2) == nil}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, rt, `
		local x = require("cuda").full({2}, 3)
		local same, ok = twice(x, 1)
		assert(rawequal(same, x), "the array came back as another value")
		assert(ok == true and x:to_table()[1] == 6, tostring(x:to_table()[1]))
		local ok, msg = pcall(twice, 5, 1)
		assert(not ok and msg:find("twice: argument 1 must be a DeviceArray, got float64", 1, true), msg)`)
	err = rt.DoString(`twice(require("cuda").zeros(1), -1)`)
	if !errors.Is(err, errNegative) || !strings.Contains(err.Error(), "twice: negative input") {
		t.Fatalf("a Go function's error through DoString: %v", err)
	}
	// A plain func literal of Func's signature works as well.
	if err := rt.SetGlobal("bad", func(args ...any) ([]any, error) { return []any{make(chan int)}, nil }); err != nil {
		t.Fatal(err)
	}
	err = rt.DoString(`bad()`)
	if err == nil || !strings.Contains(err.Error(), "bad: result 1: a chan int has no Lua value") {
		t.Fatalf("a result with no Lua value: %v", err)
	}
}

// Every refusal names the method, the global and what was wrong, and is
// ErrBadArgument (or the cause behind it) to errors.Is.
func TestEmbeddingErrorsNameTheCallAndTheProblem(t *testing.T) {
	rt := newRuntime(t)
	other := newRuntime(t)
	foreign, _ := other.Zeros([]int{1}, runtime.Float32)
	freed, _ := rt.Zeros([]int{1}, runtime.Float32)
	freed.Free()
	mustDo(t, rt, `function fails() error("boom") end; notfn = 1; function calls(f) return f() end`)
	cases := []struct {
		name string
		err  func() error
		msg  string
		is   error
	}{
		{"bad name", func() error { return rt.SetGlobal("1x", 1) }, `glua: SetGlobal("1x"): "1x" is not a Lua name`, runtime.ErrBadArgument},
		{"keyword", func() error { _, err := rt.Global("end"); return err }, `glua: Global("end"): "end" is not a Lua name`, runtime.ErrBadArgument},
		{"no Lua value", func() error { return rt.SetGlobal("c", make(chan int)) }, `glua: SetGlobal("c"): a chan int has no Lua value`, runtime.ErrBadArgument},
		{"named number type", func() error { return rt.SetGlobal("d", runtime.Float32) }, `glua: SetGlobal("d"): a device.DType has no Lua value`, runtime.ErrBadArgument},
		{"inexact integer", func() error { _, err := rt.Call("fails", 1, 1<<60); return err }, `glua: Call("fails"): argument 2: the integer 1152921504606846976 is beyond ±2^53`, runtime.ErrBadArgument},
		{"freed array", func() error { _, err := rt.Call("fails", freed); return err }, `glua: Call("fails"): argument 1: use of freed array`, runtime.ErrFreed},
		{"another runtime's", func() error { return rt.SetGlobal("f", foreign) }, `glua: SetGlobal("f"): the array belongs to another runtime`, runtime.ErrBadArgument},
		{"nil array", func() error { return rt.SetGlobal("n", (*runtime.Array)(nil)) }, `glua: SetGlobal("n"): the *Array is nil`, runtime.ErrBadArgument},
		{"zero array", func() error { return rt.SetGlobal("z", &runtime.Array{}) }, `glua: SetGlobal("z"): the Array was not made by a runtime (a zero Array)`, runtime.ErrBadArgument},
		{"nil Func", func() error { return rt.SetGlobal("f", runtime.Func(nil)) }, `glua: SetGlobal("f"): the function is nil`, runtime.ErrBadArgument},
		{"nil func", func() error { return rt.SetGlobal("f", (func(args ...any) ([]any, error))(nil)) }, `glua: SetGlobal("f"): the function is nil`, runtime.ErrBadArgument},
		{"nil LGFunction", func() error { return rt.SetGlobal("f", lua.LGFunction(nil)) }, `glua: SetGlobal("f"): the function is nil`, runtime.ErrBadArgument},
		{"nil gopher-lua function", func() error { return rt.SetGlobal("f", (func(*lua.LState) int)(nil)) }, `glua: SetGlobal("f"): the function is nil`, runtime.ErrBadArgument},
		{"nil table", func() error { return rt.SetGlobal("t", (*lua.LTable)(nil)) }, `glua: SetGlobal("t"): the *lua.LTable is nil`, runtime.ErrBadArgument},
		{"nil userdata", func() error { return rt.SetGlobal("u", (*lua.LUserData)(nil)) }, `glua: SetGlobal("u"): the *lua.LUserData is nil`, runtime.ErrBadArgument},
		{"nil Lua function", func() error { return rt.SetGlobal("f", (*lua.LFunction)(nil)) }, `glua: SetGlobal("f"): the *lua.LFunction is nil`, runtime.ErrBadArgument},
		{"nil argument", func() error { _, err := rt.Call("fails", (*lua.LTable)(nil)); return err }, `glua: Call("fails"): argument 1: the *lua.LTable is nil`, runtime.ErrBadArgument},
		{"nil Func result", func() error {
			_, err := rt.Call("calls", runtime.Func(func(...any) ([]any, error) { return []any{runtime.Func(nil)}, nil }))
			return err
		},
			`glua: Call("calls"): <string>:1: Call("calls") argument 1: result 1: the function is nil`, nil},
		{"not set", func() error { _, err := rt.Call("missing"); return err }, `glua: Call("missing"): the global missing is nil, not a function`, runtime.ErrBadArgument},
		{"not a function", func() error { _, err := rt.Call("notfn"); return err }, `glua: Call("notfn"): the global notfn is a number, not a function`, runtime.ErrBadArgument},
		{"script error", func() error { _, err := rt.Call("fails"); return err }, `glua: Call("fails"): <string>:1: boom`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			if err == nil || !strings.HasPrefix(err.Error(), c.msg) {
				t.Fatalf("got %v\nwant %s...", err, c.msg)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("errors.Is(%v, %v) is false", err, c.is)
			}
		})
	}
	var se *runtime.ScriptError
	if _, err := rt.Call("fails"); !errors.As(err, &se) {
		t.Errorf("a script error from Call is not a *ScriptError: %v", err)
	}
	if err := rt.DoString(`assert(1 + 1 == 2)`); err != nil {
		t.Fatalf("the runtime after the refusals: %v", err)
	}
	rt.Close()
	if err := rt.SetGlobal("x", 1); !errors.Is(err, runtime.ErrClosed) || !strings.HasPrefix(err.Error(), `glua: SetGlobal("x"): `) {
		t.Fatalf("SetGlobal after Close: %v", err)
	}
}

// Numbers that Lua holds exactly cross unchanged, the largest integers
// included.
func TestIntegersUpTo2To53CrossExactly(t *testing.T) {
	rt := newRuntime(t)
	for _, v := range []any{int64(1 << 53), int64(-(1 << 53)), uint64(1 << 53), math.MaxUint32, math.Inf(1)} {
		if err := rt.SetGlobal("v", v); err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		got, _ := rt.Global("v")
		if fmt.Sprint(got) != fmt.Sprint(toFloat(v)) {
			t.Errorf("%v came back as %v", v, got)
		}
	}
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	case int:
		return float64(v)
	}
	return v.(float64)
}
