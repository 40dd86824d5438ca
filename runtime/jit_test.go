package runtime

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/luac"
	"github.com/gluaproject/glua/jit"
)

// functionTree is the syntax tree of the function src returns, as
// kernels.jit receives it.
func functionTree(t *testing.T, src string) *ast.FunctionExpr {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	fn, err := luac.LoadString(L, src, "@k.lua")
	if err != nil {
		t.Fatal(err)
	}
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		t.Fatal(err)
	}
	tree, ok := luac.FunctionTree(L.Get(-1).(*lua.LFunction))
	if !ok {
		t.Fatal("no syntax tree recorded")
	}
	return tree
}

// checkedProgram is a kernel of two arrays and a number, translated with
// check_bounds as the cuda backend translates it.
func checkedProgram(t *testing.T) *jit.Program {
	t.Helper()
	f, err := jit.Parse(functionTree(t, "return function(A, x, n)\n  A[n][1] = x[n]\nend"), "k.lua")
	if err != nil {
		t.Fatal(err)
	}
	sig := jit.Signature{{Array: true, DType: device.Float32, Rank: 2}, {Array: true, DType: device.Int32, Rank: 1}, {}}
	p, err := jit.Check(f, sig, jit.Options{CheckBounds: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The launch passes each array as a pointer and its dimensions, and the
// bounds record last; the parameters must say so in the same order.
func TestJITParamsFollowTheTranslatedEntry(t *testing.T) {
	params := jitParams(checkedProgram(t))
	want := []struct {
		kind ParamKind
		dt   device.DType
	}{
		{ParamPointer, device.Float32}, {ParamInt64, device.Invalid}, {ParamInt64, device.Invalid},
		{ParamPointer, device.Int32}, {ParamInt64, device.Invalid},
		{ParamInt64, device.Invalid},
		{ParamPointer, device.Int64},
	}
	if len(params) != len(want) {
		t.Fatalf("%d parameters, want %d: %v", len(params), len(want), params)
	}
	for i, w := range want {
		if params[i].Kind != w.kind || params[i].DType != w.dt {
			t.Errorf("parameter %d (%s): kind %v dtype %v, want %v %v", i+1, params[i].Decl, params[i].Kind, params[i].DType, w.kind, w.dt)
		}
	}
}

// A GPU bounds record names the array, the index and the shape as the CPU
// evaluator's error does.
func TestGPUBoundsRecordReadsAsTheCPUError(t *testing.T) {
	p := checkedProgram(t)
	A := &Array{shape: []int{4, 3}}
	x := &Array{shape: []int{4}}
	args := []any{A, x, 7.0}
	if err := recordError(p, args, make([]float64, jit.ErrorSlots)); err != nil {
		t.Errorf("an empty record gives %v", err)
	}
	rec := []float64{1, 1, 2, 7, 1, 0, 0}
	err := recordError(p, args, rec)
	if err == nil || !strings.Contains(err.Error(), "jit: k.lua:2: index A[7][1] is out of bounds: A has shape (4, 3)") {
		t.Errorf("error %v", err)
	}
	rec = []float64{1, 2, 2, 9, 0, 0, 0}
	if err := recordError(p, args, rec); err == nil || !strings.Contains(err.Error(), "index x[9] is out of bounds: x has shape (4)") {
		t.Errorf("error %v", err)
	}
}

// numbersEnv stands in for the script's locals a kernel captures.
type numbersEnv map[string]float64

func (e numbersEnv) Upvalue(name string) (jit.Capture, bool) {
	v, ok := e[name]
	return jit.Capture{Kind: "number", Number: v}, ok
}

// A number the kernel captures is compiled in, so a launch after the
// script changed it must not reuse the variant made with the old value,
// and a launch with the value seen before must.
func TestACapturedNumberThatChangesGetsAVariantOfItsOwn(t *testing.T) {
	c := config.Default()
	rt, err := New(Options{Config: &c, Backend: "cpu", CPUMemory: "64MiB"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	tree := functionTree(t, "return function(x)\n  local s = kernels.shared(K, \"float32\")\n  x[1] = K\nend")
	env := numbersEnv{"K": 4}
	k, err := rt.JIT(tree, "k.lua", jit.Options{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	x, err := rt.Zeros([]int{1}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	cfg := LaunchConfig{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{1, 1, 1}}
	for i, K := range []float64{4, 9, 4} {
		env["K"] = K
		if err := k.Launch(cfg, x); err != nil {
			t.Fatal(err)
		}
		got, err := x.Float64s()
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != K {
			t.Errorf("launch %d with K = %v wrote %v", i+1, K, got[0])
		}
	}
	if len(k.variants) != 2 {
		t.Errorf("%d variants for K = 4, 9, 4; want 2", len(k.variants))
	}
	for _, v := range k.variants {
		if n := v.prog.Shared[0].Size; n != 4 && n != 9 {
			t.Errorf("a variant's shared array has %d elements, want K's", n)
		}
	}
}

// A bounds record of a shared or local array names it, with its shape.
func TestGPUBoundsRecordNamesSharedAndLocalArrays(t *testing.T) {
	f, err := jit.Parse(functionTree(t, "return function(x)\n  local s = kernels.shared({4, 5}, \"float32\")\n  local l = kernels.local_array(3, \"int64\")\n  s[1][1] = l[1]\n  x[1] = s[1][1]\nend"), "k.lua")
	if err != nil {
		t.Fatal(err)
	}
	p, err := jit.Check(f, jit.Signature{{Array: true, DType: device.Float32, Rank: 1}}, jit.Options{CheckBounds: true})
	if err != nil {
		t.Fatal(err)
	}
	args := []any{&Array{shape: []int{1}}}
	if err := recordError(p, args, []float64{1, 2, 4, 5, 6, 0, 0}); err == nil || !strings.Contains(err.Error(), "jit: k.lua:4: index s[5][6] is out of bounds: s has shape (4, 5)") {
		t.Errorf("shared array: %v", err)
	}
	if err := recordError(p, args, []float64{1, 3, 4, 7, 0, 0, 0}); err == nil || !strings.Contains(err.Error(), "jit: k.lua:4: index l[7] is out of bounds: l has shape (3)") {
		t.Errorf("local array: %v", err)
	}
}
