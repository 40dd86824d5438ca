package runtime

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/luac"
	"github.com/gluaproject/glua/jit"
)

// checkedProgram is a kernel of two arrays and a number, translated with
// check_bounds as the cuda backend translates it.
func checkedProgram(t *testing.T) *jit.Program {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	fn, err := luac.LoadString(L, "return function(A, x, n)\n  A[n][1] = x[n]\nend", "@k.lua")
	if err != nil {
		t.Fatal(err)
	}
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		t.Fatal(err)
	}
	tree, _ := luac.FunctionTree(L.Get(-1).(*lua.LFunction))
	f, err := jit.Parse(tree, "k.lua")
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
