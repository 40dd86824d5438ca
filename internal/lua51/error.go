package lua51

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// baseError is Lua 5.1's error([message [, level]]). gopher-lua's differs
// in three ways: it requires a message where Lua 5.1 raises nil; it puts
// the position of the nearest Lua function past any Go ones, where
// luaL_where gives none for a C function (so pcall(error, "e") gives "e");
// and it formats numbers as gopher-lua does, not as "%.14g".
func baseError(L *lua.LState) int {
	msg := L.Get(1)
	level := optInt(L, 2, 1)
	if level > 0 {
		// A number message becomes a string, position or not, as
		// lua_concat makes it in Lua 5.1.
		switch v := msg.(type) {
		case lua.LString:
			msg = lua.LString(where(L, level) + string(v))
		case lua.LNumber:
			msg = lua.LString(where(L, level) + numberString(v))
		}
	}
	L.Error(msg, 0)
	return 0
}

// where is luaL_where: "source:line: " for the function at level (0 is
// the running Go function), when it is a Lua function, and "" for a Go
// function, a level past the bottom of the stack, or one that a tail call
// took away.
func where(L *lua.LState, level int) string {
	s, ok := levelOf(L, level)
	if !ok || s.frame == nil || frameFn(s.frame).IsG {
		return ""
	}
	dbg := s.debug()
	if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.CurrentLine <= 0 {
		return ""
	}
	return fmt.Sprintf("%s:%d: ", dbg.Source, dbg.CurrentLine)
}

// Where is where, for the other packages that raise Lua 5.1's errors.
func Where(L *lua.LState, level int) string { return where(L, level) }

// raise is luaL_error for the functions here: the message, after the
// position of the function that called the running one if that is a Lua
// function. L.RaiseError looks past Go functions for a Lua one instead, so
// pcall(table.setn, {}) would get the position of pcall's caller.
func raise(L *lua.LState, msg string) {
	L.Error(lua.LString(where(L, 1)+msg), 0)
}

// baseAssert is Lua 5.1's assert(v [, message]). gopher-lua's reads the
// message as a format (assert(false, "100%") gave "100%!(NOVERB)"),
// refuses a number as the message, takes no argument at all as false, and
// puts the position of the nearest Lua function in front where Lua 5.1's
// luaL_error puts that of its caller, if a Lua function.
func baseAssert(L *lua.LState) int {
	if L.GetTop() == 0 {
		argError(L, 1, "assert", "value expected")
	}
	if lua.LVAsBool(L.Get(1)) {
		return L.GetTop()
	}
	msg := "assertion failed!"
	switch v := L.Get(2).(type) {
	case lua.LString:
		msg = string(v)
	case lua.LNumber:
		msg = numberString(v)
	default:
		if v != lua.LNil {
			argError(L, 2, "assert", "string expected, got "+typeName(L, 2))
		}
	}
	raise(L, msg)
	return 0
}
