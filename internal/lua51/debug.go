package lua51

import (
	"strconv"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// ChunkSource, where set, gives the name a function's chunk was loaded
// under ("@file", "=name", or a loaded string's source), which is Lua
// 5.1's source; the prototype's SourceName is the name as messages show
// it. internal/luac, which names chunks so, sets it.
var ChunkSource func(*lua.LFunction) (string, bool)

// shortSource is a Lua function's short_src from its prototype's
// SourceName, which internal/luac already sets to what luaO_chunkid shows;
// a name from another loader (gopher-lua's own, which takes names as they
// are) is cut to its last 56 bytes after "..." when longer than Lua's
// 60-byte buffer allows.
func shortSource(src string) string {
	const room = 60 - 1
	if len(src) > room {
		return "..." + src[len(src)-(room-3):]
	}
	return src
}

// debugTraceback is Lua 5.1's debug.traceback([thread,] [message [, level]]).
// gopher-lua's shows the first 7 and last 7 levels of a deep stack where
// Lua 5.1 shows 11 and 10 (a test of the suite counts them), names Go
// functions "[G]" and unnamed ones "(anonymous)" (Lua 5.1: "[C]: ?"),
// writes tail calls as "(tailcall)", ignores the level for a thread, and
// turns a message that is not a string into nothing; Lua 5.1 returns such
// a message as it is, and writes a string message and a newline before
// "stack traceback:", the empty string too.
func debugTraceback(L *lua.LState) int {
	L1, arg := L, 0
	if th, ok := L.Get(1).(*lua.LState); ok {
		L1, arg = th, 1
	}
	level := 0
	if L1 == L {
		level = 1 // level 0 is traceback itself
	}
	top := L.GetTop()
	if n, ok := L.Get(arg + 2).(lua.LNumber); ok {
		level, top = CInt(float64(n)), arg+1
	} else if s, ok := L.Get(arg + 2).(lua.LString); ok {
		if n, ok := str2d(string(s)); ok {
			level, top = CInt(n), arg+1
		}
	}
	var b strings.Builder
	if top > arg {
		switch m := L.Get(arg + 1).(type) {
		case lua.LString:
			b.WriteString(string(m) + "\n")
		case lua.LNumber:
			b.WriteString(numberString(m) + "\n")
		default:
			L.Push(m)
			return 1
		}
	}
	b.WriteString("stack traceback:")
	levels := stackLevels(L1, -1)
	const first, last = 12, 10 // LEVELS1 and LEVELS2
	for firstPart := true; level >= 0 && level < len(levels); level++ {
		if level+1 > first && firstPart {
			firstPart = false
			if level+1+last < len(levels) {
				b.WriteString("\n\t...")
				level = len(levels) - last - 1
				continue
			}
		}
		b.WriteString("\n\t" + levels[level].describe(L1))
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// stackLevel is one level of a stack as lua_getstack counts them: a frame,
// or a call that a tail call replaced (frame nil), or the host's call of
// the main chunk (frame nil, host true), which Lua 5.1 shows as "[C]: ?".
type stackLevel struct {
	index int // for GetStack
	frame unsafe.Pointer
	host  bool
	// yield is the name of the yield a suspended coroutine waits in, which
	// is its level 0 in Lua 5.1 (gopher-lua keeps no frame for it).
	yield *string
}

// stackLevels lists L's stack as Lua 5.1 counts its levels (levels.go),
// or with most at 0 or above its first most+1 levels only.
func stackLevels(L *lua.LState, most int) []stackLevel {
	var levels []stackLevel
	if !layout.ok {
		return levels
	}
	frame := *currentFrame(L)
	if frame != nil && L != L.G.CurrentThread && L.Status(L) == "suspended" {
		name := "?"
		if fn := frameFn(frame); !fn.IsG {
			pc := framePc(frame) - 1
			for _, call := range fn.Proto.DbgCalls {
				if call.Pc == pc && call.Name != "?" {
					name = "in function '" + call.Name + "'"
				}
			}
		}
		levels = append(levels, stackLevel{yield: &name})
	}
	// index counts levels as GetStack does, from the current frame.
	index := 0
	for ; frame != nil && (most < 0 || len(levels) <= most); frame = frameParent(frame) {
		levels = append(levels, stackLevel{index: index, frame: frame})
		index++
		if !frameFn(frame).IsG {
			for range frameTailCalls(frame) {
				levels = append(levels, stackLevel{index: index})
				index++
			}
		}
	}
	if frame == nil && L == L.G.MainThread {
		levels = append(levels, stackLevel{host: true})
	}
	return levels
}

// describe is the level's line, as Lua 5.1's traceback writes it.
func (s stackLevel) describe(L *lua.LState) string {
	switch {
	case s.host:
		return "[C]: ?"
	case s.yield != nil:
		return "[C]: " + *s.yield
	case s.frame == nil:
		return "(tail call): ?"
	}
	dbg, ok := L.GetStack(s.index)
	if !ok {
		return "?"
	}
	fn := frameFn(s.frame)
	if _, err := L.GetInfo("ln", dbg, lua.LNil); err != nil {
		return "?"
	}
	named := frameParent(s.frame) != nil && dbg.Name != "?" && dbg.Name != "" &&
		dbg.Name[0] != '<' && dbg.Name[0] != '('
	var line string
	if fn.IsG {
		line = "[C]:"
	} else {
		line = fn.Proto.SourceName + ":"
		if dbg.CurrentLine > 0 {
			line += strconv.Itoa(dbg.CurrentLine) + ":"
		}
	}
	switch {
	case named:
		return line + " in function '" + dbg.Name + "'"
	case fn.IsG:
		return line + " ?"
	case fn.Proto.LineDefined == 0:
		return line + " in main chunk"
	}
	return line + " in function <" + fn.Proto.SourceName + ":" + strconv.Itoa(fn.Proto.LineDefined) + ">"
}

// debugGetregistry is Lua 5.1's debug.getregistry: gopher-lua keeps its
// registry in a table too.
func debugGetregistry(L *lua.LState) int {
	L.Push(L.G.Registry)
	return 1
}

// debugSetmetatable is Lua 5.1's debug.setmetatable, which returns true
// where gopher-lua's returned the value.
func debugSetmetatable(L *lua.LState) int {
	switch L.Get(2).(type) {
	case *lua.LNilType, *lua.LTable:
	default:
		argError(L, 2, "setmetatable", "nil or table expected")
	}
	L.SetMetatable(L.Get(1), L.Get(2))
	L.Push(lua.LTrue)
	return 1
}

// debugSetfenv is Lua 5.1's debug.setfenv: it sets the environment of a
// function (a Go one too), a userdata or a thread, returns the object,
// and refuses any other value; gopher-lua's returned nothing and took any.
func debugSetfenv(L *lua.LState) int {
	env := L.CheckTable(2)
	switch o := L.Get(1).(type) {
	case *lua.LFunction, *lua.LUserData, *lua.LState:
		L.SetFEnv(o, env)
	default:
		L.RaiseError("'setfenv' cannot change environment of given object")
	}
	L.Push(L.Get(1))
	return 1
}
