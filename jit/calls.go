package jit

import (
	"math"
	"strings"

	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/device"
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
		case "shfl_down", "shfl_xor":
			return t.shfl(ex, name, hint)
		case "laneid":
			return &LaneID{}
		}
		t.fail(ex.Line(), "kernels.%s has no value", name)
	}
	return t.mathCall(ex, name, hint)
}

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
	if pre, vals := t.mathValues(e, want); vals != nil {
		return pre, vals
	}
	mod, name := t.library(c.Func)
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
// argument's type (sinf for float32, as CUDA's) and make integers float64,
// as Numba does; abs, min and max keep integers; floor and ceil give
// integers; ldexp's exponent and frexp's second value are integers.
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
		if name == "ldexp" && i == 1 {
			if args[i].Type() != Int {
				t.fail(a.Line(), "math.ldexp's exponent must be an integer, not %s (use math.floor)", args[i].Type())
			}
			continue
		}
		typ = join(typ, args[i].Type())
	}
	if len(args) > 1 && typ.IsFloat() {
		// literals among min/max's arguments take the others' float type
		for i, a := range ex.Args {
			if isLiteral(a) && !(name == "ldexp" && i == 1) {
				args[i] = t.expr(a, typ)
			}
		}
	}
	switch name {
	case "floor", "ceil":
		m := &Math{Fn: name, Args: args, T: Int}
		if args[0].Type() != Int && !intQuotient(args[0]) {
			// Lua's math.floor(1e300) is 1e300 and of NaN NaN, which the
			// integer this gives cannot hold: an error, as Python's
			// math.floor raises, never a saturated number
			m.Trap = t.trap(ex.Line(), "%s has no int64 value (its argument is NaN, an infinity or beyond 2^63 in magnitude), in %s",
				luaText(ex), t.what)
		}
		return m
	case "abs", "min", "max":
	default:
		if typ == Int {
			typ = Float64
		}
	}
	for i := range args {
		if !(name == "ldexp" && i == 1) {
			args[i] = t.to(args[i], typ)
		}
	}
	return &Math{Fn: name, Args: args, T: typ}
}

// intQuotient reports whether x is an integer divided by a constant of
// magnitude above 1, whose quotient always lies in int64's range (an
// int64 near 2^63 is 2^63 as a float64, so not 1). Then math.floor(i / 2),
// Lua's integer division, needs no trap.
func intQuotient(x Expr) bool {
	a, ok := x.(*Arith)
	if !ok || a.Op != "/" {
		return false
	}
	c, ok := a.Y.(*Const)
	if !ok || !(math.Abs(c.F) > 1) || math.IsInf(c.F, 0) {
		return false
	}
	switch n := a.X.(type) {
	case *Convert:
		return n.X.Type() == Int
	case *Const:
		return n.T == Int || math.Abs(n.F) <= 0x1p63
	}
	return false
}

// mathValues types math.frexp(x) and math.modf(x) assigned to want names:
// a local holding x, so that it is evaluated once, then both values read
// from it; nil if e is neither call. The extra names get no value.
func (t *typer) mathValues(e ast.Expr, want int) ([]Stmt, []Expr) {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok || c.Func == nil {
		return nil, nil
	}
	mod, name := t.library(c.Func)
	if mod != "math" || name != "frexp" && name != "modf" {
		return nil, nil
	}
	first := t.mathCall(c, name, Void).(*Math)
	x := first.Args[0]
	slot := t.newLocal("("+name+" argument)", x.Type())
	arg := &LocalGet{Slot: slot, T: x.Type()}
	second := &Math{Fn: name, Args: []Expr{arg}, T: first.T, Second: true}
	if name == "frexp" {
		second.T = Int
	}
	vals := []Expr{&Math{Fn: name, Args: []Expr{arg}, T: first.T}, second}
	if want < len(vals) {
		vals = vals[:want]
	}
	return []Stmt{&Set{Slot: slot, X: x}}, vals
}

// callStmt types kernels.syncthreads(), kernels.syncwarp() and an
// atomic whose old value is dropped.
func (t *typer) callStmt(ex *ast.FuncCallExpr) Stmt {
	_, name := t.library(ex.Func)
	switch name {
	case "syncthreads":
		t.prog.UsesSync = true
		return &SyncThreads{}
	case "syncwarp":
		t.prog.UsesWarp = true
		return &SyncWarp{Line: ex.Line()}
	}
	return t.atomic(ex, -1)
}

// atomicCall is e if it is a kernels.atomic_* call, else nil.
func (t *typer) atomicCall(e ast.Expr) *ast.FuncCallExpr {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok || c.Func == nil {
		return nil
	}
	if mod, name := t.library(c.Func); mod != "kernels" || !isAtomic(name) {
		return nil
	}
	return c
}

// atomicValue types `local x = kernels.atomic_*(...)` and `x = ...`: the
// atomic keeps the old value in a local of its own, which is the value.
func (t *typer) atomicValue(c *ast.FuncCallExpr) (*Atomic, Expr) {
	_, name := t.library(c.Func)
	at := t.atomic(c, t.newLocal("("+name+")", Void))
	typ := computeType(at.Arr.DType)
	t.prog.Locals[at.Slot].Type = typ
	return at, &LocalGet{Slot: at.Slot, T: typ}
}

// atomicDTypes are the dtypes each atomic takes: CUDA's atomicCAS
// compares integers only; the others work on both kinds (max and min on
// floats through a compare-and-swap loop, as Numba's).
func atomicDTypes(op string) (ok func(device.DType) bool, names string) {
	if op == "cas" {
		return func(d device.DType) bool { return d == device.Int32 || d == device.Int64 }, "int32 and int64"
	}
	return atomicDType, "float32, float64, int32 and int64"
}

// atomic types kernels.atomic_<op>(A, i, [expected,] v) keeping the old
// value in slot (-1: dropped).
func (t *typer) atomic(ex *ast.FuncCallExpr, slot int) *Atomic {
	_, name := t.library(ex.Func)
	op := strings.TrimPrefix(name, "atomic_")
	arr := t.array(ex.Args[0])
	if ok, names := atomicDTypes(op); !ok(arr.DType) {
		t.fail(ex.Line(), "kernels.%s works on %s arrays; %s is %s", name, names, arr.Name, arr.DType)
	}
	if arr.Rank != 1 {
		t.fail(ex.Line(), "kernels.%s takes a 1-D array; %s has %d dimensions", name, arr.Name, arr.Rank)
	}
	at := &Atomic{Op: op, Arr: arr, Index: []Expr{t.index(ex.Args[1], arr)}, Slot: slot, Line: ex.Line()}
	operand := func(e ast.Expr) Expr {
		x := t.expr(e, computeType(arr.DType))
		t.numeric(x, e)
		return x
	}
	if op == "cas" {
		at.Expected = operand(ex.Args[2])
	}
	at.X = operand(ex.Args[len(ex.Args)-1])
	return at
}

// shfl types kernels.shfl_down(v, delta) and kernels.shfl_xor(v, mask):
// v a number, which keeps its type, and an integer lane offset or mask.
func (t *typer) shfl(ex *ast.FuncCallExpr, name string, hint Type) Expr {
	t.prog.UsesWarp = true
	x := t.expr(ex.Args[0], hint)
	t.numeric(x, ex.Args[0])
	by := t.expr(ex.Args[1], Int)
	if by.Type() != Int {
		t.fail(ex.Args[1].Line(), "kernels.%s's second argument is a lane offset or mask, an integer, not %s", name, by.Type())
	}
	return &Shfl{Op: strings.TrimPrefix(name, "shfl_"), X: x, By: by, Line: ex.Line()}
}
