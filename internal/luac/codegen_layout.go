package luac

import (
	"reflect"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua's VM reads the names of globals, and the string keys of
// OP_GETTABLEKS, OP_SETTABLEKS and OP_SELF, from FunctionProto's unexported
// stringConstants, a list parallel to Constants ("" for a constant that is
// not a string) that only its own compiler fills. The field is found once,
// by name and type; if a gopher-lua release moves or changes it,
// stringConstantsOffset is not ok, compiling fails with a clear error
// rather than producing prototypes the VM would misread, and
// TestGopherLuaProtoLayoutIsKnown fails.
var stringConstantsOffset, stringConstantsOK = func() (uintptr, bool) {
	sf, ok := reflect.TypeFor[lua.FunctionProto]().FieldByName("stringConstants")
	return sf.Offset, ok && sf.Type == reflect.TypeFor[[]string]()
}()

func setStringConstants(f *lua.FunctionProto, strs []string) {
	if !stringConstantsOK {
		panic(&compileError{line: f.LineDefined, msg: "this gopher-lua release keeps its string constants where glua's compiler cannot set them"})
	}
	*(*[]string)(unsafe.Add(unsafe.Pointer(f), stringConstantsOffset)) = strs
}
