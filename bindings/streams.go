package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

const (
	streamType = "glua.Stream"
	eventType  = "glua.Event"
)

// streamsRuntime is what cuda.stream, cuda.event and cuda.timer need from
// a runtime.
type streamsRuntime interface {
	NewStream() (*runtime.Stream, error)
	NewEvent() (*runtime.Event, error)
	Timer(fn func() error) (float64, error)
}

// streamsModule is the part of the cuda module that makes streams, events
// and timers; its methods join the cuda module's table.
type streamsModule struct{ rt streamsRuntime }

func (m streamsModule) funcs() map[string]lua.LGFunction {
	return map[string]lua.LGFunction{
		"stream": m.stream,
		"event":  m.event,
		"timer":  m.timer,
	}
}

// registerStreamTypes makes the Stream and Event metatables, once per
// state, each with its methods.
func registerStreamTypes(L *lua.LState) {
	smt := L.NewTypeMetatable(streamType)
	smethods := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"synchronize": streamSynchronize,
	})
	strictMethods(L, "Stream", smethods)
	L.SetField(smt, "__index", smethods)
	L.SetField(smt, "__tostring", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LString("Stream")); return 1 }))
	emt := L.NewTypeMetatable(eventType)
	emethods := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"record":      eventRecord,
		"synchronize": eventSynchronize,
		"query":       eventQuery,
		"elapsed":     eventElapsed,
	})
	strictMethods(L, "Event", emethods)
	L.SetField(emt, "__index", emethods)
	L.SetField(emt, "__tostring", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LString("Event")); return 1 }))
}

func streamSynchronize(L *lua.LState) int {
	if err := selfOf[*runtime.Stream](L, streamKind, "synchronize").Synchronize(); err != nil {
		raise(L, "Stream:synchronize", err)
	}
	return 0
}

func eventRecord(L *lua.LState) int {
	const name = "Event:record"
	e := selfOf[*runtime.Event](L, eventKind, "record")
	var s *runtime.Stream
	if L.Get(2) != lua.LNil {
		s = checkStream(L, name, 2)
	}
	if err := e.Record(s); err != nil {
		raise(L, name, err)
	}
	L.Push(L.Get(1))
	return 1
}

func eventSynchronize(L *lua.LState) int {
	if err := selfOf[*runtime.Event](L, eventKind, "synchronize").Synchronize(); err != nil {
		raise(L, "Event:synchronize", err)
	}
	return 0
}

func eventQuery(L *lua.LState) int {
	done, err := selfOf[*runtime.Event](L, eventKind, "query").Done()
	if err != nil {
		raise(L, "Event:query", err)
	}
	L.Push(lua.LBool(done))
	return 1
}

// eventElapsed is e:elapsed(start): the device time from start to e, in
// seconds.
func eventElapsed(L *lua.LState) int {
	const name = "Event:elapsed"
	e := selfOf[*runtime.Event](L, eventKind, "elapsed")
	s, err := e.Since(checkUser[*runtime.Event](L, name, 2, eventKind))
	if err != nil {
		raise(L, name, err)
	}
	L.Push(lua.LNumber(s))
	return 1
}

func (m streamsModule) stream(L *lua.LState) int {
	s, err := m.rt.NewStream()
	if err != nil {
		raise(L, "cuda.stream", err)
	}
	pushUserData(L, s, streamType)
	return 1
}

func (m streamsModule) event(L *lua.LState) int {
	e, err := m.rt.NewEvent()
	if err != nil {
		raise(L, "cuda.event", err)
	}
	pushUserData(L, e, eventType)
	return 1
}

// timer is cuda.timer(fn, ...): it runs fn and returns the device seconds
// its work took, followed by fn's results.
func (m streamsModule) timer(L *lua.LState) int {
	const name = "cuda.timer"
	fn, ok := L.Get(1).(*lua.LFunction)
	if !ok {
		argError(L, name, 1, "function expected, got %s", typeName(L.Get(1)))
	}
	base := L.GetTop()
	secs, err := m.rt.Timer(func() error {
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
}

func checkStream(L *lua.LState, name string, n int) *runtime.Stream {
	return checkUser[*runtime.Stream](L, name, n, streamKind)
}
