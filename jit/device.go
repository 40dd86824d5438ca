package jit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// calls are the device functions a program calls, each typed once per
// signature of its arguments, in an order where a function comes after
// those it calls (C declares them so).
type calls struct {
	typed map[string]*Func
	order []*Func
	keys  []string
	stack []string // the functions being typed, outermost first, for recursion
	funcs []*Function
}

// deviceCall checks a call of the captured local id: what can be known
// before a launch (the local holds a function now, and it is in the
// language and takes that many arguments) is checked now.
func (p *parser) deviceCall(ex *ast.FuncCallExpr, id *ast.IdentExpr, asStmt bool) {
	line := ex.Line()
	if asStmt {
		p.fail(line, "the value of %s is not used (a device function writes no arrays; use what it returns)", id.Value)
	}
	c, _ := p.env.Upvalue(id.Value)
	switch {
	case c.Kind == "number":
		p.fail(line, "%s is a number, not a function", id.Value)
	case c.Err != nil:
		if e, ok := c.Err.(*Error); ok {
			panic(e)
		}
		p.fail(line, "%v", c.Err)
	case c.Func != nil && len(c.Func.Params) != len(ex.Args):
		p.fail(line, "%s takes %d arguments (%s), got %d", id.Value, len(c.Func.Params), strings.Join(c.Func.Params, ", "), len(ex.Args))
	}
	p.exprs(ex.Args)
}

// deviceFunction is the device function ex calls, nil when ex calls
// none: a name that is not the kernel's, captured from the script.
func (t *typer) deviceFunction(ex *ast.FuncCallExpr) *Function {
	id, ok := ex.Func.(*ast.IdentExpr)
	if !ok || t.calls == nil {
		return nil
	}
	if _, local := t.lookup(id.Value); local || !t.isCaptured(id.Value, id.Line()) {
		return nil
	}
	c := t.captureOf(id.Value, ex.Line())
	if c.Kind != "function" {
		t.fail(ex.Line(), "%s is a number, not a function", id.Value)
	}
	return c.Func
}

// deviceCall types a call of fn, typing fn for its arguments' types the
// first time they are seen.
func (t *typer) deviceCall(ex *ast.FuncCallExpr, fn *Function) *Call {
	name := luaText(ex.Func)
	if len(ex.Args) != len(fn.Params) {
		t.fail(ex.Line(), "%s takes %d arguments (%s), got %d", name, len(fn.Params), strings.Join(fn.Params, ", "), len(ex.Args))
	}
	if len(fn.Params) > maxFuncParams {
		t.fail(ex.Line(), "%s takes %d parameters; a device function takes at most %d", name, len(fn.Params), maxFuncParams)
	}
	args := make([]Expr, len(ex.Args))
	types := make([]string, len(ex.Args))
	for i, a := range ex.Args {
		args[i] = t.value(a)
		types[i] = args[i].Type().String()
	}
	if i := slices.Index(t.calls.funcs, fn); i >= 0 {
		cycle := append(slices.Clone(t.calls.stack[i:]), name)
		t.fail(ex.Line(), "recursion is not allowed in a kernel: %s", strings.Join(cycle, " calls "))
	}
	key := fmt.Sprintf("%p(%s)", fn, strings.Join(types, ","))
	f := t.calls.typed[key]
	if f == nil {
		f = t.typeDevice(fn, name, args)
		t.calls.typed[key] = f
		t.calls.order = append(t.calls.order, f)
		t.calls.keys = append(t.calls.keys, key)
	}
	return &Call{Fn: f, Args: args}
}

// deviceValues types a call of fn whose values go to want names: one
// CallSet into fresh locals, and each of the first want values.
func (t *typer) deviceValues(ex *ast.FuncCallExpr, fn *Function, want int) ([]Stmt, []Expr) {
	call := t.deviceCall(ex, fn)
	n := len(call.Fn.Results)
	if want > n {
		t.fail(ex.Line(), "%s gives %d value(s), assigned to %d name(s)", luaText(ex.Func), n, want)
	}
	set := &CallSet{Call: call}
	vals := make([]Expr, want)
	for i, r := range call.Fn.Results {
		typ := call.Fn.Locals[r].Type
		slot := t.newLocal(fmt.Sprintf("(%s value %d)", luaText(ex.Func), i+1), typ)
		set.Slots = append(set.Slots, slot)
		if i < want {
			vals[i] = &LocalGet{Slot: slot, T: typ}
		}
	}
	return []Stmt{set}, vals
}

// typeDevice types fn's body with parameters of args' types, as a Func of
// the program: its values are those of its returns, each of the join of
// the types returned in its place.
func (t *typer) typeDevice(fn *Function, name string, args []Expr) *Func {
	t.calls.stack = append(t.calls.stack, name)
	t.calls.funcs = append(t.calls.funcs, fn)
	defer func() {
		t.calls.stack = t.calls.stack[:len(t.calls.stack)-1]
		t.calls.funcs = t.calls.funcs[:len(t.calls.funcs)-1]
	}()
	mark := len(t.calls.order)
	var sub *typer
	var params []int
	var body []Stmt
	err := unify(func(widen map[int]Type) {
		// a round that widened a local is typed again from the start,
		// and the functions it typed with it
		for _, k := range t.calls.keys[mark:] {
			delete(t.calls.typed, k)
		}
		t.calls.order, t.calls.keys = t.calls.order[:mark], t.calls.keys[:mark]
		sub = &typer{parser: parser{chunk: fn.Chunk, env: fn.Env, device: true}, prog: &Program{
			Name: t.prog.Name, Chunk: fn.Chunk, Line: fn.Line(), Traps: slices.Clone(t.prog.Traps),
		}, widen: widen, calls: t.calls, defaultFloat: t.defaultFloat}
		sub.what = fmt.Sprintf("the device function %s at %s:%d", name, fn.Chunk, fn.Line())
		sub.names = []map[string]binding{{}}
		params = make([]int, len(fn.Params))
		for i, p := range fn.Params {
			params[i] = sub.newLocal(p, args[i].Type())
			sub.fix(params[i])
			sub.bind(p, binding{slot: params[i]})
		}
		body = sub.block(fn.Tree.Stmts)
	})
	if err != nil {
		panic(err)
	}
	f := &Func{Name: fmt.Sprintf("glua_dev%d_%s", len(t.calls.typed)+1, cname(name)), Params: params, Body: body}
	sub.results(fn, name, f)
	f.Locals = sub.prog.Locals
	t.prog.Traps = sub.prog.Traps
	t.prog.UsesSync = t.prog.UsesSync || sub.prog.UsesSync
	t.prog.UsesWarp = t.prog.UsesWarp || sub.prog.UsesWarp
	return f
}

// results gives f its value slots from the function's returns, each
// return's values converted to them.
func (t *typer) results(fn *Function, name string, f *Func) {
	if len(t.returns) == 0 {
		return
	}
	n := len(t.returns[0].Values)
	types := make([]Type, n)
	for _, r := range t.returns {
		if len(r.Values) != n {
			t.fail(fn.Line(), "the returns of %s give %d and %d values; a device function gives the same number on every path", name, n, len(r.Values))
		}
		for i, v := range r.Values {
			switch {
			case types[i] == Void:
				types[i] = v.Type()
			case (types[i] == Bool) != (v.Type() == Bool):
				t.fail(fn.Line(), "value %d of %s is a boolean on one path and a number on another", i+1, name)
			case types[i] != Bool:
				types[i] = join(types[i], v.Type())
			}
		}
	}
	last := fn.Tree.Stmts[len(fn.Tree.Stmts)-1]
	if _, ok := last.(*ast.ReturnStmt); !ok || n == 0 {
		t.fail(fn.Line(), "%s must end with `return` and its values, as its every path must give them", name)
	}
	for i, typ := range types {
		f.Results = append(f.Results, t.newLocal(fmt.Sprintf("(result %d)", i+1), typ))
	}
	for _, r := range t.returns {
		r.Results = f.Results
		for i, v := range r.Values {
			r.Values[i] = t.to(v, types[i])
		}
	}
	f.Ret = &LocalGet{Slot: f.Results[0], T: types[0]}
}

// returnStmt types `return` in a kernel (which ends the thread) and
// `return a, b` in a device function.
func (t *typer) returnStmt(st *ast.ReturnStmt) Stmt {
	r := &Return{}
	if !t.device {
		return r
	}
	for _, e := range st.Exprs {
		r.Values = append(r.Values, t.value(e))
	}
	t.returns = append(t.returns, r)
	return r
}
