package jit

import (
	"github.com/yuin/gopher-lua/ast"
)

// callExpr types math.f(...), kernels.grid(1), kernels.gridsize(1) and a
// call of a device function (its first value).
func (t *typer) callExpr(ex *ast.FuncCallExpr, hint Type) Expr {
	if fn := t.deviceFunction(ex); fn != nil {
		call := t.deviceCall(ex, fn)
		if len(call.Fn.Results) == 0 {
			t.fail(ex.Line(), "%s returns no value", luaText(ex.Func))
		}
		return call
	}
	mod, name := t.library(ex.Func)
	if mod == "kernels" {
		switch name {
		case "grid", "gridsize":
			if _, vals := t.multiValue(ex, 1); vals != nil {
				return vals[0]
			}
		case "shared", "local_array":
			t.fail(ex.Line(), "kernels.%s must be the value of a local: local s = kernels.%s(n, dtype)", name, name)
		}
		t.fail(ex.Line(), "kernels.%s has no value", name)
	}
	return t.mathCall(ex, name, hint)
}

// multiMath are the math functions of several values, typed for want of
// them as multiValue types a call: the statements that compute them and
// an expression for each.
var multiMath = map[string]func(t *typer, ex *ast.FuncCallExpr, want int) ([]Stmt, []Expr){}

// multiValue types a call of several values whose values go to want
// names (kernels.grid(n), kernels.gridsize(n), a device function or a
// math function of several values): the statements that compute them and
// an expression of each; nil if e is no such call.
func (t *typer) multiValue(e ast.Expr, want int) ([]Stmt, []Expr) {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok || c.Func == nil {
		return nil, nil
	}
	if fn := t.deviceFunction(c); fn != nil {
		return t.deviceValues(c, fn, want)
	}
	mod, name := t.library(c.Func)
	if mod == "math" && multiMath[name] != nil {
		return multiMath[name](t, c, want)
	}
	if mod != "kernels" || name != "grid" && name != "gridsize" {
		return nil, nil
	}
	dims, err := dimsArg(c.Args[0])
	if err != nil {
		t.fail(c.Line(), "kernels.%s %v", name, err)
	}
	if dims != want {
		t.fail(c.Line(), "kernels.%s(%d) gives %d value(s), assigned to %d name(s)", name, dims, dims, want)
	}
	vals := make([]Expr, dims)
	for i := range vals {
		if name == "grid" {
			vals[i] = &Grid{Axis: i}
		} else {
			vals[i] = &GridSize{Axis: i}
		}
	}
	return nil, vals
}

// mathCall types math.f(args): the float functions keep a float
// argument's type and make integers float64, as Numba does; abs, min and
// max keep integers; floor and ceil give integers.
func (t *typer) mathCall(ex *ast.FuncCallExpr, name string, hint Type) Expr {
	if name == "floor" || name == "ceil" {
		// an integer comes out, whatever type the context wants
		hint = Void
	}
	args := make([]Expr, len(ex.Args))
	typ := Int
	for i, a := range ex.Args {
		args[i] = t.expr(a, hint)
		t.numeric(args[i], a)
		typ = join(typ, args[i].Type())
	}
	if len(args) > 1 && typ.IsFloat() {
		// literals among min/max's arguments take the others' float type
		for i, a := range ex.Args {
			if isLiteral(a) {
				args[i] = t.expr(a, typ)
			}
		}
	}
	switch name {
	case "floor", "ceil":
		return &Math{Fn: name, Args: args, T: Int}
	case "abs", "min", "max":
	default:
		if typ == Int {
			typ = Float64
		}
	}
	for i := range args {
		args[i] = t.to(args[i], typ)
	}
	return &Math{Fn: name, Args: args, T: typ}
}

// callStmt types kernels.syncthreads() and kernels.atomic_add(A, i, v).
func (t *typer) callStmt(ex *ast.FuncCallExpr) Stmt {
	_, name := t.library(ex.Func)
	if name == "syncthreads" {
		t.prog.UsesSync = true
		return &SyncThreads{}
	}
	arr := t.array(ex.Args[0])
	if !atomicDType(arr.DType) {
		t.fail(ex.Line(), "kernels.atomic_add works on float32, float64, int32 and int64 arrays; %s is %s", arr.Name, arr.DType)
	}
	if arr.Rank != 1 {
		t.fail(ex.Line(), "kernels.atomic_add takes a 1-D array; %s has %d dimensions", arr.Name, arr.Rank)
	}
	idx := t.index(ex.Args[1], arr)
	x := t.expr(ex.Args[2], computeType(arr.DType))
	t.numeric(x, ex.Args[2])
	return &AtomicAdd{Arr: arr, Index: []Expr{idx}, X: x, Line: ex.Line()}
}
