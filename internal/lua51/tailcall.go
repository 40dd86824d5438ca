package lua51

import (
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// opTailcall is OP_TAILCALL, which glua's compiler emits for return f(...)
// followed by RETURN A 0, as Lua 5.1's does. Lua 5.1 makes a real tail
// call only of a Lua function: a C function runs as a plain call, and the
// RETURN after it hands its results on. gopher-lua replaced the caller's
// frame with a Go function's too, so a Go function that yields, `return
// coroutine.yield(v)` at the end of a coroutine's function, left no frame
// for the resume to come back to: the next resume failed with "invalid
// memory address or nil pointer dereference". Here a Go function, or a
// value whose __call is one, is called as OP_CALL calls it.
func opTailcall(L *lua.LState, inst uint32, baseframe unsafe.Pointer) int {
	rg, cf := registryOf(L), *currentFrame(L)
	if goCallee(L, registers(rg)[frameBase(cf)+int(inst>>18)&0xff]) {
		const opcodeBits = 0x3f << 26
		return opCall(L, inst&^opcodeBits|uint32(lua.OP_CALL)<<26, baseframe)
	}
	return gopherHandlers[lua.OP_TAILCALL](L, inst, baseframe)
}

// goCallee says whether calling v runs a Go function.
func goCallee(L *lua.LState, v lua.LValue) bool {
	if fn, ok := v.(*lua.LFunction); ok {
		return fn.IsG
	}
	fn, ok := L.GetMetaField(v, "__call").(*lua.LFunction)
	return ok && fn.IsG
}
