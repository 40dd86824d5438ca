package luac

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

func TestFunctionTreeIsTheFunctionsOwnSyntaxTree(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	src := `
		local function a(x) return x end
		local t = {f = function(p, q) return p end, g = function(r) return r end}
		local b = function(s, u, v) local inner = function(w) return w end; return inner end
		return a, t.f, t.g, b, b()`
	fn, err := LoadString(L, src, "trees.lua")
	if err != nil {
		t.Fatal(err)
	}
	L.Push(fn)
	if err := L.PCall(0, 5, nil); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"x"}, {"p", "q"}, {"r"}, {"s", "u", "v"}, {"w"}}
	for i, names := range want {
		f := L.Get(i - 5).(*lua.LFunction)
		tree, ok := FunctionTree(f)
		if !ok {
			t.Fatalf("function %d: no tree", i+1)
		}
		if got := tree.ParList.Names; len(got) != len(names) || got[0] != names[0] {
			t.Errorf("function %d: tree has parameters %v, want %v", i+1, got, names)
		}
	}
}

func TestFunctionTreeIsAbsentForOtherFunctions(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	if err := L.DoString(`plain = function(x) return x end`); err != nil {
		t.Fatal(err)
	}
	if _, ok := FunctionTree(L.GetGlobal("plain").(*lua.LFunction)); ok {
		t.Error("a function compiled by L.DoString has a tree")
	}
	if _, ok := FunctionTree(L.NewFunction(func(*lua.LState) int { return 0 })); ok {
		t.Error("a Go function has a tree")
	}
}
