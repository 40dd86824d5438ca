package lua51

import (
	"fmt"
	"strings"

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
	raw, tail := stackLevel(L, level)
	if tail {
		return ""
	}
	dbg, ok := L.GetStack(raw)
	if !ok {
		return ""
	}
	if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.CurrentLine <= 0 {
		return ""
	}
	return fmt.Sprintf("%s:%d: ", dbg.Source, dbg.CurrentLine)
}

// stackLevel is the level GetStack must be asked for to reach what Lua 5.1
// calls level, and whether level is instead one of the levels Lua 5.1
// counts for the frames tail calls replaced (GetStack answers the bottom
// frame for those, which would give error a position Lua 5.1 does not).
// The walk is lua_getstack's, except that leaving a frame of a function
// internal/luac made to keep a large function's literals apart
// (compilerMade) counts no level: such a frame and the user's function
// that called it are one level, as in Lua 5.1, which has no such frame,
// and the innermost of them (the one running the user's line) answers for
// it. So error("e", 2) in moved statements, or at level 3 in a function
// they call, names the user function's caller.
func stackLevel(L *lua.LState, level int) (raw int, tail bool) {
	return walkLevels(L, level, true)
}

// walkLevels is stackLevel's walk; without tails it counts no levels for
// tail calls, as gopher-lua's GetStack does not.
func walkLevels(L *lua.LState, level int, tails bool) (raw int, tail bool) {
	if !layout.ok {
		return level, false
	}
	frame := *currentFrame(L)
	for ; level > 0 && frame != nil; frame = frameParent(frame) {
		raw++
		fn := frameFn(frame)
		if compilerMade(fn) {
			continue
		}
		level--
		if tails && !fn.IsG {
			level -= frameTailCalls(frame)
		}
	}
	return raw, level < 0
}

// compilerMade reports the functions internal/luac makes to hold a user's
// statements or table fields: their first parameter has a name that
// begins with "(", which no source can write.
func compilerMade(fn *lua.LFunction) bool {
	if fn == nil || fn.IsG || fn.Proto == nil || fn.Proto.NumParameters == 0 || len(fn.Proto.DbgLocals) == 0 {
		return false
	}
	return strings.HasPrefix(fn.Proto.DbgLocals[0].Name, "(")
}

// raise is luaL_error for the functions here: the message, after the
// position of the function that called the running one if that is a Lua
// function. L.RaiseError looks past Go functions for a Lua one instead, so
// pcall(table.setn, {}) would get the position of pcall's caller.
func raise(L *lua.LState, msg string) {
	L.Error(lua.LString(where(L, 1)+msg), 0)
}
