package jit

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/luac"
)

// parseKernel compiles `return function ... end` as a script does and
// parses the function's recorded tree as kernels.jit does.
func parseKernel(t testing.TB, src string) (*Function, error) {
	t.Helper()
	return Parse(kernelTree(t, src), "kernel.lua")
}

// kernelTree is the syntax tree internal/luac records for the function
// that src returns.
func kernelTree(t testing.TB, src string) *ast.FunctionExpr {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	fn, err := luac.LoadString(L, src, "@kernel.lua")
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		t.Fatalf("run: %v", err)
	}
	tree, ok := luac.FunctionTree(L.Get(-1).(*lua.LFunction))
	if !ok {
		t.Fatal("no syntax tree recorded")
	}
	return tree
}

// translate parses and checks src for sig.
func translate(t testing.TB, src string, sig Signature, o Options) (*Program, error) {
	t.Helper()
	f, err := parseKernel(t, src)
	if err != nil {
		return nil, err
	}
	return Check(f, sig, o)
}

func arr(d device.DType, rank int) Arg { return Arg{Array: true, DType: d, Rank: rank} }

var (
	intArg   = Arg{}
	floatArg = Arg{Float: true}
)

func mustTranslate(t testing.TB, src string, sig Signature, o Options) *Program {
	t.Helper()
	p, err := translate(t, src, sig, o)
	if err != nil {
		t.Fatalf("translate: %v", err)
	}
	return p
}

func containsAll(t *testing.T, text string, want []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the CUDA C lacks %q", w)
		}
	}
	if t.Failed() {
		t.Log(text[strings.Index(text, "extern \"C\""):])
	}
}

// mustParseMap parses src's function as kernels.map does, from chunk.
func mustParseMap(t *testing.T, src, chunk string) *Function {
	t.Helper()
	f, err := ParseMap(kernelTree(t, src), chunk)
	if err != nil {
		t.Fatalf("ParseMap: %v", err)
	}
	return f
}
