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

// mapReduce is kernels.map_reduce(fn, op, x, ... [, {axis =, out =}]):
// fn's values over every element combined by op (a name or a Lua
// function of two values), a number; with axis, along one axis of 2-D
// arrays into a DeviceArray (out, or a new one).
func (m kernelsModule) mapReduce(L *lua.LState) int {
	const name = "kernels.map_reduce"
	tree, fn := functionTree(L, name)
	op := reduceOp(L, name)
	last := L.GetTop()
	var opts *lua.LTable
	if _, ok := L.Get(last).(*lua.LTable); ok && last >= 3 {
		opts = options(L, name, last, "axis", "out")
		last--
	}
	args := mapArgsUpTo(L, name, 3, last)
	if opts == nil || opts.RawGetString("axis") == lua.LNil {
		if opts != nil && opts.RawGetString("out") != lua.LNil {
			badArgument(L, "%s: option out is for a reduction along an axis; give axis too", name)
		}
		v, err := m.rt.MapReduce(tree, fn.Proto.SourceName, op, args)
		if err != nil {
			raise(L, name, err)
		}
		L.Push(lua.LNumber(v))
		return 1
	}
	axis, ok := intOf(optNumber(L, name, opts, "axis", 0))
	if !ok {
		badArgument(L, "%s: option axis must be 1 or 2, got %s", name, valueText(opts.RawGetString("axis")))
	}
	outValue := opts.RawGetString("out")
	var out *runtime.Array
	if outValue != lua.LNil {
		if out, ok = userValue[*runtime.Array](outValue); !ok {
			badArgument(L, "%s: option out must be a DeviceArray, got %s", name, typeName(outValue))
		}
	}
	res, err := m.rt.MapReduceAxis(tree, fn.Proto.SourceName, op, args, axis, out)
	if err != nil {
		raise(L, name, err)
	}
	if out != nil {
		L.Push(outValue) // the script's own value, so that it compares equal
	} else {
		pushNew(L, m.rt, res)
	}
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
	return mapArgsUpTo(L, name, first, L.GetTop())
}

// mapArgsUpTo are the function's arguments at positions first to last.
func mapArgsUpTo(L *lua.LState, name string, first, last int) []any {
	args := make([]any, 0, max(0, last-first+1))
	for n := first; n <= last; n++ {
		switch v := L.Get(n).(type) {
		case lua.LNumber:
			args = append(args, float64(v))
		case *lua.LTable:
			argError(L, name, n, "DeviceArray or number expected, got table (an options table goes last)")
		default:
			args = append(args, checkArray(L, name, n))
		}
	}
	return args
}
