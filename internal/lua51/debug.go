package lua51

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// ChunkSource, where set, gives the name a function's chunk was loaded
// under ("@file", "=name", or a loaded string's source), which is Lua
// 5.1's source; the prototype's SourceName is the name as messages show
// it. internal/luac, which names chunks so, sets it.
var ChunkSource func(*lua.LFunction) (string, bool)

// infoGetter is debug.getinfo with the fields gopher-lua's leaves out or
// names its own way. gopher-lua's has no short_src, which scripts print
// beside currentline, calls a Go function's kind "G" where Lua 5.1 says
// "C" (with source "=[C]", short_src "[C]" and -1 for its lines), has no
// namewhat, and ignores option "L" (activelines).
//
// namewhat is "" where no name is known and left out where gopher-lua
// knows the name, since it keeps no record of how the function was
// reached (global, local, field or method).
type infoGetter struct {
	getinfo lua.LGFunction // gopher-lua's
}

func (g infoGetter) call(L *lua.LState) int {
	what := "flnSu"
	if s, ok := L.Get(2).(lua.LString); ok {
		what = string(s)
		// gopher-lua's knows no "L" and answers nil to it; it gives the
		// function only for "f", and says which frame is the bottom one
		// only for "S".
		L.Replace(2, lua.LString(strings.ReplaceAll(what, "L", "")+"fS"))
	}
	// gopher-lua's reads the stack from the running function's frame,
	// which is this one's: calling it as Go adds no level.
	if g.getinfo(L) != 1 {
		return 0
	}
	info, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		return 1
	}
	fn, _ := info.RawGetString("func").(*lua.LFunction)
	if strings.Contains(what, "S") {
		if fn != nil && fn.IsG {
			info.RawSetString("what", lua.LString("C"))
			info.RawSetString("source", lua.LString("=[C]"))
			info.RawSetString("linedefined", lua.LNumber(-1))
			info.RawSetString("lastlinedefined", lua.LNumber(-1))
		}
		info.RawSetString("short_src", lua.LString(shortSource(fn, info)))
		if ChunkSource != nil && fn != nil && !fn.IsG {
			if src, ok := ChunkSource(fn); ok {
				info.RawSetString("source", lua.LString(src))
			}
		}
	}
	if info.RawGetString("what") == lua.LString("main") {
		// gopher-lua names the bottom frame "main chunk" (or "corountine"
		// in a coroutine); Lua 5.1 gives it no name.
		info.RawSetString("name", lua.LNil)
	}
	if strings.Contains(what, "n") && info.RawGetString("name") == lua.LNil {
		info.RawSetString("namewhat", lua.LString(""))
	}
	if strings.Contains(what, "L") && fn != nil && !fn.IsG {
		lines := L.NewTable()
		for _, line := range fn.Proto.DbgSourcePositions {
			lines.RawSetInt(line, lua.LTrue)
		}
		info.RawSetString("activelines", lines)
	}
	if !strings.Contains(what, "f") {
		info.RawSetString("func", lua.LNil)
	}
	return 1
}

// shortSource is short_src: "[C]" for a Go function, else the
// prototype's SourceName, which internal/luac already sets to what
// luaO_chunkid shows; a name from another loader (gopher-lua's own, which
// takes names as they are) is cut to its last 56 bytes after "..." when
// longer than Lua's 60-byte buffer allows.
func shortSource(fn *lua.LFunction, info *lua.LTable) string {
	if fn != nil && fn.IsG {
		return "[C]"
	}
	src := lua.LVAsString(info.RawGetString("source"))
	const room = 60 - 1
	if len(src) > room {
		return "..." + src[len(src)-(room-3):]
	}
	return src
}

// messageTraceback is debug.traceback with Lua 5.1's line after a message: Lua
// 5.1 writes a string message and a newline before "stack traceback:",
// the empty string too (an uncaught error("", 2) prints an empty line
// there), where gopher-lua's leaves an empty message out.
type messageTraceback struct {
	fn lua.LGFunction // gopher-lua's
}

func (tb messageTraceback) call(L *lua.LState) int {
	n := tb.fn(L)
	msgArg := 1
	if _, isThread := L.Get(1).(*lua.LState); isThread {
		msgArg = 2
	}
	if s, ok := L.Get(msgArg).(lua.LString); ok && s == "" && n == 1 {
		if out, ok := L.Get(-1).(lua.LString); ok {
			L.Replace(L.GetTop(), "\n"+out)
		}
	}
	return n
}
