package lua51

import (
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// opLen is Lua 5.1's OP_LEN for tables: the length of a table is its
// border whatever its metatable holds, since Lua 5.1 consults __len only
// for values that are neither tables nor strings (gopher-lua calls a
// table's __len too). Every other value goes to gopher-lua's handler,
// whose errors are worded where they are raised, as all of its are.
func opLen(L *lua.LState, inst uint32, baseframe unsafe.Pointer) int {
	rg, cf := registryOf(L), *currentFrame(L)
	if t, ok := rk(rg, cf, int(inst&0x1ff)).(*lua.LTable); ok {
		setNumber(rg, frameBase(cf)+int(inst>>18)&0xff, float64(length(t)))
		return 0
	}
	return gopherHandlers[lua.OP_LEN](L, inst, baseframe)
}
