package lua51

import (
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// Levels are counted as Lua 5.1's lua_getstack counts them, from the
// list debug.traceback prints (stackLevels): level 0 is the running
// function, each level above is its caller, a function that replaced its
// caller by a tail call leaves one level per tail call that holds no
// function, and the host that called the main chunk is a C function's
// level, as is the yield a suspended coroutine waits in. gopher-lua's
// GetStack answered a tail call's level with the bottom frame, so
// getfenv(2) across a tail call gave the main chunk's environment where
// Lua 5.1 refuses, and knew no host level.

// levelOf is level of L1's stack, or false where the stack is not that
// deep (or gopher-lua's layout is unknown).
func levelOf(L1 *lua.LState, level int) (stackLevel, bool) {
	if !layout.debugOK || level < 0 {
		return stackLevel{}, false
	}
	levels := stackLevels(L1, level)
	if level >= len(levels) {
		return stackLevel{}, false
	}
	return levels[level], true
}

// cFunction says whether the level is a C function's that gopher-lua
// keeps no frame for: the host's or a yield's.
func (s stackLevel) cFunction() bool { return s.host || s.yield != nil }

// debug is a lua.Debug for the level's frame, for L1.GetInfo.
func (s stackLevel) debug() *lua.Debug {
	d := &lua.Debug{}
	*(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(d), layout.debugFrame)) = s.frame
	return d
}

// getfunc is lbaselib.c's getfunc: the function argument 1 names, or the
// one running at the level it gives (optional for getfenv, default 1).
// A C function's level without a frame gives nil.
func getfunc(L *lua.LState, name string, opt bool) *lua.LFunction {
	if f, ok := L.Get(1).(*lua.LFunction); ok {
		return f
	}
	var level int
	if opt {
		level = optInt(L, 1, 1)
	} else {
		level = checkInt(L, 1)
	}
	if level < 0 {
		argError(L, 1, name, "level must be non-negative")
	}
	s, ok := levelOf(L, level)
	if !ok {
		argError(L, 1, name, "invalid level")
	}
	switch {
	case s.cFunction():
		return nil
	case s.frame == nil:
		L.RaiseError("no function environment for tail call at level %d", level)
	}
	return frameFn(s.frame)
}

// baseGetfenv is Lua 5.1's getfenv: a C function's environment is the
// thread's globals.
func baseGetfenv(L *lua.LState) int {
	fn := getfunc(L, "getfenv", true)
	if fn == nil || fn.IsG {
		L.Push(L.Env)
	} else {
		L.Push(L.GetFEnv(fn))
	}
	return 1
}

// baseSetfenv is Lua 5.1's setfenv: the table is checked first, level 0
// sets the thread's globals and returns nothing, and a C function's
// environment cannot be set.
func baseSetfenv(L *lua.LState) int {
	env := L.CheckTable(2)
	fn := getfunc(L, "setfenv", false)
	if n, ok := toNumber(L.Get(1)); ok && n == 0 {
		L.Env = env
		return 0
	}
	if fn == nil || fn.IsG {
		L.RaiseError("'setfenv' cannot change environment of given object")
	}
	L.SetFEnv(fn, env)
	L.Push(fn)
	return 1
}

// debugGetinfo is Lua 5.1's debug.getinfo([thread,] function|level
// [, what]): a thread's levels, lua5.1's argument errors, only the fields
// the options ask for, and what gopher-lua's leaves out or names its own
// way: short_src, "C" for a Go function (source "=[C]", short_src "[C]",
// -1 for its lines), namewhat, activelines ("L"), a tail call's level, and
// no name where none is known (gopher-lua makes one up).
//
// name and namewhat are those CallNameOf reports for the call.
func debugGetinfo(L *lua.LState) int {
	L1, arg := threadArg(L)
	what := "flnSu"
	if L.GetTop() >= arg+2 && L.Get(arg+2) != lua.LNil {
		what = L.CheckString(arg + 2)
	}
	var s stackLevel
	var fn *lua.LFunction
	switch v := L.Get(arg + 1).(type) {
	case *lua.LFunction:
		fn = v
	default:
		n, isNumber := toNumber(v)
		if !isNumber {
			argError(L, arg+1, "getinfo", "function or level expected")
		}
		var ok bool
		if s, ok = levelOf(L1, CInt(n)); !ok {
			L.Push(lua.LNil)
			return 1
		}
		if s.frame != nil {
			fn = frameFn(s.frame)
		}
	}
	if strings.Trim(what, "SlunLf") != "" {
		argError(L, arg+2, "getinfo", "invalid option")
	}
	info := L.NewTable()
	var dbg lua.Debug
	if fn != nil {
		d, opts := &dbg, ">S"
		if s.frame != nil {
			d, opts = s.debug(), "Sln"
		}
		if _, err := L1.GetInfo(opts, d, fn); err != nil {
			L.Push(lua.LNil)
			return 1
		}
		dbg = *d
	}
	// The level is a Lua function's, a C (Go) function's, a tail call's
	// or a suspended coroutine's yield.
	tail := fn == nil && !s.cFunction()
	cfn := s.cFunction() || fn != nil && fn.IsG
	if strings.Contains(what, "S") {
		switch {
		case tail:
			setInfo(info, "=(tail call)", "(tail call)", -1, -1, "tail")
		case cfn:
			setInfo(info, "=[C]", "[C]", -1, -1, "C")
		default:
			source := dbg.Source
			if ChunkSource != nil {
				if src, ok := ChunkSource(fn); ok {
					source = src
				}
			}
			kind := "Lua" // a main chunk's prototype is defined at line 0
			if dbg.LineDefined == 0 {
				kind = "main"
			}
			setInfo(info, source, shortSource(dbg.Source), dbg.LineDefined, dbg.LastLineDefined, kind)
		}
	}
	if strings.Contains(what, "l") {
		line := -1
		if !tail && !cfn && s.frame != nil {
			line = dbg.CurrentLine
		}
		info.RawSetString("currentline", lua.LNumber(line))
	}
	if strings.Contains(what, "u") {
		nups := 0
		if fn != nil {
			nups = len(fn.Upvalues)
		}
		info.RawSetString("nups", lua.LNumber(nups))
	}
	if strings.Contains(what, "n") {
		name, namewhat := levelName(s, dbg.Name)
		if name != "" || tail {
			// info_tailcall names a tail call's level "", not nil.
			info.RawSetString("name", lua.LString(name))
		}
		info.RawSetString("namewhat", lua.LString(namewhat))
	}
	if strings.Contains(what, "L") && fn != nil && !fn.IsG {
		lines := L.NewTable()
		for _, line := range fn.Proto.DbgSourcePositions {
			lines.RawSetInt(line, lua.LTrue)
		}
		info.RawSetString("activelines", lines)
	}
	if strings.Contains(what, "f") && fn != nil {
		info.RawSetString("func", fn)
	}
	L.Push(info)
	return 1
}

func setInfo(info *lua.LTable, source, short string, defined, lastDefined int, what string) {
	info.RawSetString("source", lua.LString(source))
	info.RawSetString("short_src", lua.LString(short))
	info.RawSetString("linedefined", lua.LNumber(defined))
	info.RawSetString("lastlinedefined", lua.LNumber(lastDefined))
	info.RawSetString("what", lua.LString(what))
}

// levelName is the name and namewhat of the function at level s: what
// CallNameOf recorded for the call, or else gopher-lua's name for it where
// it knows a real one (it makes one up otherwise: "<src:line>",
// "(anonymous)", "main chunk"), with no namewhat.
func levelName(s stackLevel, name string) (string, string) {
	if s.frame == nil {
		return "", ""
	}
	parent := frameParent(s.frame)
	if parent == nil || frameTailCalls(s.frame) > 0 || frameFn(parent).IsG {
		return "", ""
	}
	if CallNameOf != nil {
		if n, ok := CallNameOf(frameFn(parent).Proto, framePc(parent)-1); ok {
			return n.Name, n.What
		}
	}
	if name == "" || name[0] == '<' || name[0] == '(' {
		return "", ""
	}
	return name, ""
}

// CallName is how a call named the function it calls, as Lua 5.1's
// getobjname reads it back from the code: What is "global", "local",
// "method", "field" or "upvalue", and Name is "?" for a field or method
// whose key is not a string constant the instruction holds.
type CallName struct{ Name, What string }

// CallNameOf, where set, gives the CallName of the call at pc of proto.
// internal/luac, which records them, sets it.
var CallNameOf func(proto *lua.FunctionProto, pc int) (CallName, bool)

// threadArg is ldblib.c's getthread: an optional thread first, whose
// stack the level arguments then name.
func threadArg(L *lua.LState) (*lua.LState, int) {
	if th, ok := L.Get(1).(*lua.LState); ok {
		return th, 1
	}
	return L, 0
}

// localLevel is the level argument of debug.getlocal and setlocal. A level
// below 0 is, as lua_getstack answers it, a level without a function:
// one that has no locals.
func localLevel(L, L1 *lua.LState, arg int, name string) stackLevel {
	level := checkInt(L, arg)
	if level < 0 {
		return stackLevel{}
	}
	s, ok := levelOf(L1, level)
	if !ok {
		argError(L, arg, name, "level out of range")
	}
	return s
}

// debugGetlocal is Lua 5.1's debug.getlocal([thread,] level, n): a tail
// call's level and a Go function's level without a frame have no locals;
// gopher-lua's read the main chunk's for the first.
func debugGetlocal(L *lua.LState) int {
	L1, arg := threadArg(L)
	s := localLevel(L, L1, arg+1, "getlocal")
	n := checkInt(L, arg+2)
	if s.frame == nil {
		L.Push(lua.LNil)
		return 1
	}
	name, v := L1.GetLocal(s.debug(), n)
	if name == "" {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(lua.LString(name))
	L.Push(v)
	return 2
}

// debugSetlocal is Lua 5.1's debug.setlocal([thread,] level, n, value).
func debugSetlocal(L *lua.LState) int {
	L1, arg := threadArg(L)
	s := localLevel(L, L1, arg+1, "setlocal")
	n := checkInt(L, arg+2)
	v := L.CheckAny(arg + 3)
	name := ""
	if s.frame != nil {
		name = L1.SetLocal(s.debug(), n, v)
	}
	if name == "" {
		L.Push(lua.LNil)
	} else {
		L.Push(lua.LString(name))
	}
	return 1
}
