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
