package luac

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// The compiler fills gopher-lua's unexported string constants by their
// offset; a release that moves or retypes the field must fail here.
func TestGopherLuaProtoLayoutIsKnown(t *testing.T) {
	if !stringConstantsOK {
		t.Fatal("lua.FunctionProto has no stringConstants []string: the compiler cannot fill it")
	}
	L := lua.NewState()
	defer L.Close()
	fn := mustLoad(t, L, "x = 'global'; local t = {key = 1}; print(x, t.key, ('s'):upper())")
	if got, want := runCaptured(t, L, fn), "global\t1\tS"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
}

// `c and "a" or "b"` tests c once and then only jumps, as gopher-lua's
// compiler made it (Lua 5.1 tests the loaded "a" again): a loop choosing a
// label each turn runs no slower than it did.
func TestConstantAlternativesAreNotTestedAgain(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	fn := mustLoad(t, L, "local i = ...\nreturn i % 2 == 0 and 'even' or 'odd', nil and 1 or 2")
	for pc, inst := range fn.Proto.Code {
		if op := opcodeOf(inst); op == lua.OP_TEST || op == lua.OP_TESTSET {
			t.Errorf("pc %d tests a constant", pc)
		}
	}
	L.Push(fn)
	L.Push(lua.LNumber(4))
	if err := L.PCall(1, 2, nil); err != nil {
		t.Fatal(err)
	}
	if a, b := L.Get(-2), L.Get(-1); a != lua.LString("even") || b != lua.LNumber(2) {
		t.Errorf("returned %v, %v; want even, 2", a, b)
	}
}
