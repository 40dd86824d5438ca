package bindings

import (
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/internal/luac"
	"github.com/gluaproject/glua/runtime"
)

// mapFn is kernels.map(fn, out, ...): out[i] = fn(a[i], b[i], ...) in one
// kernel, numbers broadcast.
func (m kernelsModule) mapFn(L *lua.LState) int {
	const name = "kernels.map"
	tree, fn := functionTree(L, name)
	out := checkArray(L, name, 2)
	args := mapArgs(L, name, 3)
	if err := m.rt.Map(tree, fn.Proto.SourceName, out, args); err != nil {
		raise(L, name, err)
	}
	L.Push(L.Get(2))
	return 1
}

// mapReduce is kernels.map_reduce(fn, op, x, ...): fn's values over every
// element combined by op (a name or a Lua function of two values), a
// number.
func (m kernelsModule) mapReduce(L *lua.LState) int {
	const name = "kernels.map_reduce"
	tree, fn := functionTree(L, name)
	op := reduceOp(L, name)
	args := mapArgs(L, name, 3)
	v, err := m.rt.MapReduce(tree, fn.Proto.SourceName, op, args)
	if err != nil {
		raise(L, name, err)
	}
	L.Push(lua.LNumber(v))
	return 1
}

// reduceOp is argument 2 of kernels.map_reduce: the name of an op, or a
// Lua function of two values written in a script.
func reduceOp(L *lua.LState, name string) runtime.ReduceOp {
	switch op := L.Get(2).(type) {
	case lua.LString:
		return runtime.ReduceOp{Name: string(op)}
	case *lua.LFunction:
		tree, ok := luac.FunctionTree(op)
		if !ok {
			argError(L, name, 2, "an op function written in a script is expected (a Go function, or one compiled outside glua's loader, has no source to translate)")
		}
		return runtime.ReduceOp{Tree: tree, Chunk: op.Proto.SourceName}
	}
	argError(L, name, 2, "\"sum\", \"prod\", \"max\", \"min\" or a function of two values expected, got %s", typeName(L.Get(2)))
	return runtime.ReduceOp{}
}

// functionTree is argument 1 of kernels.jit, map and map_reduce, and its
// syntax tree.
func functionTree(L *lua.LState, name string) (*ast.FunctionExpr, *lua.LFunction) {
	fn, ok := L.Get(1).(*lua.LFunction)
	if !ok {
		argError(L, name, 1, "a Lua function expected, got %s", typeName(L.Get(1)))
	}
	tree, ok := luac.FunctionTree(fn)
	if !ok {
		argError(L, name, 1, "a function written in a script is expected (a Go function, or one compiled outside glua's loader, has no source to translate)")
	}
	return tree, fn
}

// mapArgs are the function's arguments from position first on: arrays
// and numbers.
func mapArgs(L *lua.LState, name string, first int) []any {
	args := make([]any, 0, max(0, L.GetTop()-first+1))
	for n := first; n <= L.GetTop(); n++ {
		switch v := L.Get(n).(type) {
		case lua.LNumber:
			args = append(args, float64(v))
		case *lua.LTable:
			argError(L, name, n, "DeviceArray or number expected, got table (options such as {axis = 1} are not supported yet)")
		default:
			args = append(args, checkArray(L, name, n))
		}
	}
	return args
}
