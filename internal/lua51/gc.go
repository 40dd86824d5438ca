package lua51

import (
	"runtime"
	"runtime/metrics"

	lua "github.com/yuin/gopher-lua"
)

// heapBytes stands for Lua 5.1's count of the bytes its allocator has
// handed out and not yet freed. gopher-lua allocates from Go's heap and
// keeps no count of its own, so this is the heap's: the bytes in objects,
// live or awaiting the sweeper, which is what Lua's count holds too
// (garbage it has not yet collected included). It covers the whole
// process, not one state; in the glua command the interpreter is nearly
// all of it.
//
// runtime/metrics reads the figure without stopping the world, where
// runtime.ReadMemStats stops it every call: scripts call
// collectgarbage("count") in loops to watch their memory.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// baseGcinfo is Lua 5.1's gcinfo(), which gopher-lua lacks: the memory in
// use, in whole kilobytes.
func baseGcinfo(L *lua.LState) int {
	L.Push(lua.LNumber(heapBytes() >> 10))
	return 1
}

// collector is the state behind one Lua state's collectgarbage: the two
// tuning values Lua 5.1 lets a script set and read back, and the work that
// "step" calls have done towards the next cycle.
type collector struct {
	pause, stepmul int
	workKB         float64
}

// collectgarbage is Lua 5.1's collectgarbage([opt [, arg]]). gopher-lua's
// runs a full collection whatever the option and returns nothing, so
// collectgarbage("count"), the usual way a script watches its memory,
// returns nil there and costs a collection.
//
// Go's collector serves the whole process and cannot be paused or tuned
// for one state: "stop" and "restart" do nothing, and "setpause" and
// "setstepmul" only remember their value, so that the next call returns
// it as the previous one, as Lua 5.1's do.
//
// Go has no smaller unit of collection than a cycle, so "step" counts the
// work Lua 5.1's incremental collector would do, about stepmul% of
// (arg + 1) KB a call, and runs a full collection, returning true, once
// that reaches the heap's size, as Lua's cycle ends when it has traversed
// its heap. So `repeat until collectgarbage("step")` ends after one cycle,
// a larger arg ends it in fewer calls, as the manual says, and a script
// stepping once a frame pays for a collection only now and then.
func (c *collector) collectgarbage(L *lua.LState) int {
	opt := "collect"
	if L.Get(1) != lua.LNil {
		opt = L.CheckString(1)
	}
	arg := optInt(L, 2, 0)
	switch opt {
	case "collect":
		c.workKB = 0
		runtime.GC()
		L.Push(lua.LNumber(0))
	case "count":
		L.Push(lua.LNumber(float64(heapBytes()) / 1024))
	case "step":
		c.workKB += float64(arg+1) * float64(max(c.stepmul, 1)) / 100
		// a negative arg is a huge one there (it is shifted as unsigned),
		// which finishes the cycle
		if arg >= 0 && c.workKB < float64(heapBytes())/1024 {
			L.Push(lua.LFalse)
			break
		}
		c.workKB = 0
		runtime.GC()
		L.Push(lua.LTrue)
	case "stop", "restart":
		L.Push(lua.LNumber(0))
	case "setpause":
		L.Push(lua.LNumber(c.pause))
		c.pause = arg
	case "setstepmul":
		L.Push(lua.LNumber(c.stepmul))
		c.stepmul = arg
	default:
		L.ArgError(1, "invalid option '"+opt+"'")
	}
	return 1
}

// fileGc is Lua 5.1's __gc of files, io_gc: it closes the file unless it
// is one of the standard three or already closed, and refuses anything
// but a file. gopher-lua's files have none, so getmetatable(io.stdin).__gc
// is nil there. Lua values are collected by Go's collector, which never
// calls it; a script can.
type fileGc struct {
	meta  *lua.LTable    // the files' metatable
	close *lua.LFunction // gopher-lua's file:close
	std   []lua.LValue   // io.stdin, io.stdout, io.stderr
}

func (g fileGc) call(L *lua.LState) int {
	ud, ok := L.Get(1).(*lua.LUserData)
	if !ok || ud.Metatable != g.meta {
		argError(L, 1, "__gc", "FILE* expected, got "+typeName(L, 1))
	}
	for _, f := range g.std {
		if f == ud {
			return 0
		}
	}
	L.Push(g.close)
	L.Push(ud)
	// A file closed already fails to close again; io_gc ignores that.
	_ = PCall(L, 1, 0, nil)
	return 0
}
