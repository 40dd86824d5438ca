package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

const (
	streamType = "glua.Stream"
	eventType  = "glua.Event"
)

// streamFuncs are cuda.stream, cuda.event and cuda.timer.
func streamFuncs(rt *runtime.Runtime, L *lua.LState) map[string]lua.LGFunction {
	smt := L.NewTypeMetatable(streamType)
	L.SetField(smt, "__index", L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"synchronize": func(L *lua.LState) int {
			if err := checkStream(L, "Stream:synchronize", 1).Synchronize(); err != nil {
				raise(L, "Stream:synchronize", err)
			}
			return 0
		},
	}))
	L.SetField(smt, "__tostring", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LString("Stream")); return 1 }))
	emt := L.NewTypeMetatable(eventType)
	L.SetField(emt, "__index", L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"record": func(L *lua.LState) int {
			const name = "Event:record"
			e := checkEvent(L, name, 1)
			var s *runtime.Stream
			if L.Get(2) != lua.LNil {
				s = checkStream(L, name, 2)
			}
			if err := e.Record(s); err != nil {
				raise(L, name, err)
			}
			L.Push(L.Get(1))
			return 1
		},
		"synchronize": func(L *lua.LState) int {
			if err := checkEvent(L, "Event:synchronize", 1).Synchronize(); err != nil {
				raise(L, "Event:synchronize", err)
			}
			return 0
		},
		"query": func(L *lua.LState) int {
			done, err := checkEvent(L, "Event:query", 1).Done()
			if err != nil {
				raise(L, "Event:query", err)
			}
			L.Push(lua.LBool(done))
			return 1
		},
		// e:elapsed(start) is the device time from start to e, in seconds.
		"elapsed": func(L *lua.LState) int {
			const name = "Event:elapsed"
			s, err := checkEvent(L, name, 1).Since(checkEvent(L, name, 2))
			if err != nil {
				raise(L, name, err)
			}
			L.Push(lua.LNumber(s))
			return 1
		},
	}))
	L.SetField(emt, "__tostring", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LString("Event")); return 1 }))

	return map[string]lua.LGFunction{
		"stream": func(L *lua.LState) int {
			s, err := rt.NewStream()
			if err != nil {
				raise(L, "cuda.stream", err)
			}
			pushUserData(L, s, streamType)
			return 1
		},
		"event": func(L *lua.LState) int {
			e, err := rt.NewEvent()
			if err != nil {
				raise(L, "cuda.event", err)
			}
			pushUserData(L, e, eventType)
			return 1
		},
		// cuda.timer(fn, ...) runs fn and returns the device seconds its work
		// took, followed by fn's results.
		"timer": func(L *lua.LState) int {
			const name = "cuda.timer"
			fn, ok := L.Get(1).(*lua.LFunction)
			if !ok {
				argError(L, name, 1, "function expected, got %s", typeName(L.Get(1)))
			}
			base := L.GetTop()
			secs, err := rt.Timer(func() error {
				L.Push(fn)
				for i := 2; i <= base; i++ {
					L.Push(L.Get(i))
				}
				L.Call(base-1, lua.MultRet)
				return nil
			})
			if err != nil {
				raise(L, name, err)
			}
			nret := L.GetTop() - base
			L.Insert(lua.LNumber(secs), base+1)
			return nret + 1
		},
	}
}

func checkStream(L *lua.LState, name string, n int) *runtime.Stream {
	if s, ok := userValue[*runtime.Stream](L.Get(n)); ok {
		return s
	}
	argError(L, name, n, "Stream expected, got %s", typeName(L.Get(n)))
	return nil
}

func checkEvent(L *lua.LState, name string, n int) *runtime.Event {
	if e, ok := userValue[*runtime.Event](L.Get(n)); ok {
		return e
	}
	argError(L, name, n, "Event expected, got %s", typeName(L.Get(n)))
	return nil
}
