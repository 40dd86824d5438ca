package bindings

import (
	"errors"
	"fmt"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/runtime"
)

const graphType = "glua.Graph"

// graphsRuntime is what cuda.graph needs from a runtime.
type graphsRuntime interface {
	Capture(fn func() error) (*runtime.Graph, error)
	WrapLuaError(err error) error
}

// graphsModule is the part of the cuda module that records graphs; its
// methods join the cuda module's table.
type graphsModule struct{ rt graphsRuntime }

func (m graphsModule) funcs() map[string]lua.LGFunction {
	return map[string]lua.LGFunction{"graph": m.graph}
}

// registerGraphType makes the Graph metatable, once per state.
func registerGraphType(L *lua.LState) {
	mt := L.NewTypeMetatable(graphType)
	methods := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"launch": graphLaunch,
		"free":   graphFree,
	})
	strictMethods(L, "Graph", methods)
	L.SetField(mt, "__index", methods)
	L.SetField(mt, "__tostring", L.NewFunction(graphString))
}

// graph is cuda.graph(fn): fn runs once, its device work recorded rather
// than run, and the recording comes back as a Graph.
func (m graphsModule) graph(L *lua.LState) int {
	const name = "cuda.graph"
	fn, ok := L.Get(1).(*lua.LFunction)
	if !ok {
		argError(L, name, 1, "function expected, got %s", typeName(L.Get(1)))
	}
	if L.GetTop() > 1 {
		argError(L, name, 2, "cuda.graph takes only the function; it captures the values it needs as upvalues")
	}
	g, err := m.rt.Capture(func() error {
		L.Push(fn)
		if err := L.PCall(0, 0, nil); err != nil {
			return fnError(m.rt.WrapLuaError(err))
		}
		return nil
	})
	if err != nil {
		raise(L, name, err)
	}
	pushUserData(L, g, graphType)
	return 1
}

func graphLaunch(L *lua.LState) int {
	const name = "Graph:launch"
	if err := selfOf[*runtime.Graph](L, graphKind, "launch").Launch(); err != nil {
		raise(L, name, err)
	}
	return 0
}

func graphFree(L *lua.LState) int {
	const name = "Graph:free"
	if err := selfOf[*runtime.Graph](L, graphKind, "free").Free(); err != nil {
		raise(L, name, err)
	}
	return 0
}

func graphString(L *lua.LState) int {
	g := metaSelf[*runtime.Graph](L, graphKind, "__tostring")
	var s string
	switch {
	case g.IsFreed():
		s = "Graph (freed)"
	case g.Replays():
		s = "Graph (runs its function again at each launch: this backend records no graphs)"
	default:
		ops := "operations"
		if g.Nodes() == 1 {
			ops = "operation"
		}
		s = fmt.Sprintf("Graph (%d %s, %s held)", g.Nodes(), ops, config.FormatSize(g.HeldBytes()))
	}
	L.Push(lua.LString(s))
	return 1
}

// fnError is the error fn raised, as its message reads: a one-line
// message rather than one that carries the traceback of the protected
// call inside it. What caused it (a capture refusal, an out-of-memory
// error) stays visible to errors.Is and errors.As.
func fnError(err error) error {
	var ae *lua.ApiError
	if !errors.As(err, &ae) {
		return err
	}
	return &calledError{msg: ae.Object.String(), err: err}
}

type calledError struct {
	msg string
	err error
}

func (e *calledError) Error() string { return e.msg }
func (e *calledError) Unwrap() error { return e.err }
