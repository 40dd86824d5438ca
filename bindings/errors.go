package bindings

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/runtime"
)

// raise turns a runtime error into a Lua error prefixed with the Lua-visible
// name of the call (`kernels.matmul: ...`). Lua adds the script position.
func raise(L *lua.LState, name string, err error) {
	runtime.RaiseError(L, err, "%s: %s", name, err.Error())
}

// badArgument raises an error about the arguments or options a call was
// given; a host sees it as runtime.ErrBadArgument.
func badArgument(L *lua.LState, format string, args ...any) {
	runtime.RaiseError(L, runtime.ErrBadArgument, format, args...)
}

// argError reports a bad argument by its position n on the stack, naming
// the call. A method's (DeviceArray:rows) are counted after self, as Lua
// 5.1 counts them, so that d:rows(1.5, 2) blames argument #1.
func argError(L *lua.LState, name string, n int, format string, args ...any) {
	if strings.Contains(name, ":") {
		n--
	}
	runtime.RaiseError(L, runtime.ErrBadArgument, "%s: bad argument #%d (%s)", name, n, fmt.Sprintf(format, args...))
}

// valueText is v as glua's messages write it: a number as Lua 5.1 writes
// it ("%.14g": 0.33333333333333, 1e+15, inf, nan), a string or a boolean
// as it is, anything else by its type.
func valueText(v lua.LValue) string {
	switch v := v.(type) {
	case lua.LNumber:
		return lua51.NumberString(float64(v))
	case lua.LString:
		return string(v)
	case lua.LBool, *lua.LNilType:
		return v.String()
	}
	return typeName(v)
}

// typeName is the Lua type of v as a user would name it, with glua's
// userdata types by their own names.
func typeName(v lua.LValue) string {
	if ud, ok := v.(*lua.LUserData); ok && ud != nil {
		if k, ok := kindOf(ud.Value); ok {
			return k.name
		}
	}
	return v.Type().String()
}
