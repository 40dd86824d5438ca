package jit

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/device"
)

// Options are kernels.jit's options that change the translation.
type Options struct {
	Name        string // the CUDA entry; "glua_jit" when empty
	CheckBounds bool
	// Env reads the locals of the script the kernel captures; nil when
	// it captures none.
	Env Env
}

// Check types f for one call signature and returns its typed form.
func Check(f *Function, sig Signature, o Options) (*Program, error) {
	if len(sig) != len(f.Params) {
		return nil, &Error{Chunk: f.Chunk, Line: f.Line(), Msg: fmt.Sprintf("the kernel takes %d arguments (%s), got %d", len(f.Params), strings.Join(f.Params, ", "), len(sig))}
	}
	name := o.Name
	if name == "" {
		name = "glua_jit"
	}
	what := fmt.Sprintf("the kernel at %s:%d", f.Chunk, f.Line())
	if o.Name != "" {
		what = fmt.Sprintf("the kernel %s at %s:%d", o.Name, f.Chunk, f.Line())
	}
	var t *typer
	err := unify(func(widen map[int]Type) {
		t = &typer{parser: parser{chunk: f.Chunk, env: f.Env}, prog: &Program{
			Name: name, Chunk: f.Chunk, Line: f.Line(), Signature: sig, CheckBounds: o.CheckBounds,
		}, widen: widen, calls: &calls{typed: map[string]*Func{}}}
		t.defaultFloat = defaultFloat(sig)
		t.what = what
		t.params(f, sig)
		t.prog.Body = t.block(f.Tree.Stmts)
	})
	if err != nil {
		return nil, err
	}
	t.prog.Funcs = append(t.prog.Funcs, t.calls.order...)
	return t.prog, nil
}

// widened is raised when a local takes a value of a wider type than its
// first: unify types the function again with that local widened.
type widened struct {
	slot int
	to   Type
}

// unify runs typeOnce until no local widens: a local's type is the join
// of every value assigned to it, as Numba unifies a variable's types
// (`local s = 0` then `s = s + x[i]` makes s a float). Each round widens
// a local, and a local widens at most twice (integer, float32, float64),
// so the rounds are few.
func unify(typeOnce func(widen map[int]Type)) (err error) {
	widen := map[int]Type{}
	for {
		var w *widened
		func() {
			defer func() {
				switch r := recover().(type) {
				case nil:
				case widened:
					w = &r
				case *Error:
					err = r
				default:
					panic(r)
				}
			}()
			typeOnce(widen)
		}()
		if w == nil {
			return err
		}
		widen[w.slot] = w.to
	}
}

// defaultFloat is the type of a float literal with no float beside it:
// float32 when the kernel's float arrays are all 32 bits or narrower, so
// that `local acc = 0.0` does not turn a float32 kernel into float64 work.
func defaultFloat(sig Signature) Type {
	t := Float64
	for _, a := range sig {
		if a.Array && a.DType == device.Float64 {
			return Float64
		}
		if a.Array && a.DType.IsFloat() {
			t = Float32
		}
	}
	return t
}

// typer builds the typed form; it reuses the parser's scopes, whose
// entries here are bindings.
type typer struct {
	parser
	prog         *Program
	defaultFloat Type
	names        []map[string]binding
	what         string // the function, as a trap's message names it
	// widen holds the locals (by slot) that unify found to take a wider
	// type than their first value's; nil where locals keep their first
	// type (kernels.map's functions).
	widen map[int]Type
	// fixed are slots whose type cannot widen: number parameters, whose
	// type the launch passes.
	fixed map[int]bool
	// calls are the device functions typed so far, shared with the
	// typers of the device functions themselves.
	calls *calls
	// returns are a device function's Return statements, whose values
	// take the function's result types once its body is typed.
	returns []*Return
}

// trap adds an error the program raises while it runs, at line, and
// returns its number for the Arith that raises it.
func (t *typer) trap(line int, format string, args ...any) int {
	t.prog.Traps = append(t.prog.Traps, &Error{Chunk: t.chunk, Line: line, Msg: fmt.Sprintf(format, args...)})
	return len(t.prog.Traps)
}

// binding is what a name means: a local's slot or an array.
type binding struct {
	slot int // -1 for an array
	arr  *Array
	// line of the declaration, for the message when the first assignment
	// is missing
	line int
}

func (t *typer) params(f *Function, sig Signature) {
	t.names = []map[string]binding{{}}
	for i, name := range f.Params {
		a := sig[i]
		p := Param{Name: name, Slot: -1}
		if a.Array {
			if a.Rank < 1 || a.Rank > MaxRank {
				t.fail(f.Line(), "argument %d (%s) has %d dimensions; a kernel takes arrays of 1 to %d", i+1, name, a.Rank, MaxRank)
			}
			p.Array = &Array{Name: name, DType: a.DType, Rank: a.Rank, Param: i, Shared: -1}
			t.bind(name, binding{slot: -1, arr: p.Array})
		} else {
			typ := Int
			if a.Float {
				typ = Float64
			}
			p.Slot = t.newLocal(name, typ)
			t.fix(p.Slot)
			t.bind(name, binding{slot: p.Slot})
		}
		t.prog.Params = append(t.prog.Params, p)
	}
}

func (t *typer) newLocal(name string, typ Type) int {
	if w, ok := t.widen[len(t.prog.Locals)]; ok && typ != Bool {
		// never narrower than this round's first value, so that each
		// round only widens and unify ends
		typ = join(typ, w)
	}
	t.prog.Locals = append(t.prog.Locals, Local{Name: name, Type: typ})
	return len(t.prog.Locals) - 1
}

func (t *typer) fix(slot int) {
	if t.fixed == nil {
		t.fixed = map[int]bool{}
	}
	t.fixed[slot] = true
}

func (t *typer) bind(name string, b binding) { t.names[len(t.names)-1][name] = b }

func (t *typer) lookup(name string) (binding, bool) {
	for i := len(t.names) - 1; i >= 0; i-- {
		if b, ok := t.names[i][name]; ok {
			return b, true
		}
	}
	return binding{}, false
}

func (t *typer) block(stmts []ast.Stmt) []Stmt {
	t.names = append(t.names, map[string]binding{})
	var out []Stmt
	for _, s := range stmts {
		out = append(out, t.stmt(s)...)
	}
	t.names = t.names[:len(t.names)-1]
	return out
}

func (t *typer) stmt(s ast.Stmt) []Stmt {
	switch st := s.(type) {
	case *ast.LocalAssignStmt:
		return t.local(st)
	case *ast.AssignStmt:
		return t.assign(st)
	case *ast.FuncCallStmt:
		return []Stmt{t.callStmt(st.Expr.(*ast.FuncCallExpr))}
	case *ast.DoBlockStmt:
		return t.block(st.Stmts)
	case *ast.IfStmt:
		pre, cond := t.ifCond(st.Condition)
		return append(pre, &If{Cond: cond, Then: t.block(st.Then), Else: t.block(st.Else)})
	case *ast.WhileStmt:
		return []Stmt{&While{Cond: t.cond(st.Condition), Body: t.block(st.Stmts)}}
	case *ast.NumberForStmt:
		return []Stmt{t.numericFor(st)}
	case *ast.BreakStmt:
		return []Stmt{&Break{}}
	case *ast.ReturnStmt:
		return []Stmt{t.returnStmt(st)}
	}
	t.fail(s.Line(), "%s is not allowed in a kernel", stmtName(s))
	return nil
}

// cond is a condition: a boolean, because Lua takes every number as true
// (0 included) and C takes 0 as false, so a number would mean one thing on
// the CPU and another on the GPU.
func (t *typer) cond(e ast.Expr) Expr {
	x := t.expr(e, Void)
	if x.Type() != Bool {
		t.fail(e.Line(), "a condition must be a comparison or a boolean, not %s (in Lua every number is true; write x ~= 0)", x.Type())
	}
	return x
}

// ifCond types an if's condition. An atomic on the left of its
// comparison (if kernels.atomic_cas(lock, 1, 0, 1) == 0 then) runs first,
// as Lua evaluates it first, in a statement of its own before the if; the
// comparison reads its old value through a name no Lua name can be.
func (t *typer) ifCond(e ast.Expr) ([]Stmt, Expr) {
	c, ok := e.(*ast.RelationalOpExpr)
	if !ok || t.atomicCall(c.Lhs) == nil {
		return nil, t.cond(e)
	}
	at, _ := t.atomicValue(t.atomicCall(c.Lhs))
	old := &ast.IdentExpr{Value: "(old value)"}
	old.SetLine(c.Lhs.Line())
	t.bind(old.Value, binding{slot: at.Slot})
	cmp := &ast.RelationalOpExpr{Operator: c.Operator, Lhs: old, Rhs: c.Rhs}
	cmp.SetLine(c.Line())
	return []Stmt{at}, t.cond(cmp)
}

// local declares locals: `local x = e`, `local r, c = kernels.grid(2)`,
// `local s = kernels.shared(n, dtype)` or `local x` to be assigned later.
func (t *typer) local(st *ast.LocalAssignStmt) []Stmt {
	line := st.Line()
	if len(st.Exprs) > len(st.Names) {
		t.fail(line, "more values than names in local")
	}
	if len(st.Exprs) == 1 && len(st.Names) == 1 && t.atomicCall(st.Exprs[0]) != nil {
		c := t.atomicCall(st.Exprs[0])
		at, old := t.atomicValue(c)
		slot := t.newLocal(st.Names[0], old.Type())
		t.bind(st.Names[0], binding{slot: slot})
		return []Stmt{at, &Set{Slot: slot, X: t.to(old, t.prog.Locals[slot].Type)}}
	}
	if len(st.Exprs) == 1 && len(st.Names) == 1 && t.isFixedArray(st.Exprs[0]) {
		t.bind(st.Names[0], binding{slot: -1, arr: t.fixedArray(st.Names[0], st.Exprs[0].(*ast.FuncCallExpr))})
		return nil
	}
	var out []Stmt
	vals := make([]Expr, 0, len(st.Names))
	for i, e := range st.Exprs {
		if i == len(st.Exprs)-1 && len(st.Names) > len(st.Exprs) {
			// the last expression gives the remaining names their values,
			// as in Lua, when it is a call of several values
			stmts, multi := t.multiValue(e, len(st.Names)-i)
			if multi != nil {
				out = append(out, stmts...)
				vals = append(vals, multi...)
				continue
			}
		}
		vals = append(vals, t.value(e))
	}
	for i, n := range st.Names {
		if i >= len(vals) {
			// Declared now, typed by its first assignment.
			t.bind(n, binding{slot: t.newLocal(n, Void), line: line})
			continue
		}
		slot := t.newLocal(n, vals[i].Type())
		out = append(out, &Set{Slot: slot, X: t.to(vals[i], t.prog.Locals[slot].Type)})
		t.bind(n, binding{slot: slot})
	}
	return out
}

// value types an expression that becomes a local's value: a float literal
// alone takes the kernel's default float.
func (t *typer) value(e ast.Expr) Expr {
	x := t.expr(e, Void)
	if x.Type() == Void {
		t.fail(e.Line(), "%s has no value", exprName(e))
	}
	return x
}

func (t *typer) assign(st *ast.AssignStmt) []Stmt {
	if len(st.Lhs) != 1 || len(st.Rhs) != 1 {
		return t.stmt(splitAssign(st))
	}
	switch l := st.Lhs[0].(type) {
	case *ast.IdentExpr:
		if c := t.atomicCall(st.Rhs[0]); c != nil {
			at, old := t.atomicValue(c)
			return []Stmt{at, t.setLocal(l, st.Rhs[0], old)}
		}
		return []Stmt{t.setLocal(l, st.Rhs[0], nil)}
	case *ast.AttrGetExpr:
		arr, idx := t.element(l)
		if c := t.atomicCall(st.Rhs[0]); c != nil {
			return t.storeAtomic(arr, idx, c, l.Line())
		}
		x := t.expr(st.Rhs[0], computeType(arr.DType))
		t.numeric(x, st.Rhs[0])
		return []Stmt{&Store{Arr: arr, Index: idx, X: x, Line: l.Line()}}
	}
	t.fail(st.Line(), "cannot assign to %s", exprName(st.Lhs[0]))
	return nil
}

// storeAtomic is A[i] = kernels.atomic_*(...): the index first, as Lua
// evaluates a target before the value, then the atomic, then the store
// of its old value.
func (t *typer) storeAtomic(arr *Array, idx []Expr, c *ast.FuncCallExpr, line int) []Stmt {
	var out []Stmt
	for k, x := range idx {
		slot := t.newLocal("(index)", Int)
		out = append(out, &Set{Slot: slot, X: x})
		idx[k] = &LocalGet{Slot: slot, T: Int}
	}
	at, old := t.atomicValue(c)
	return append(out, at, &Store{Arr: arr, Index: idx, X: old, Line: line})
}

// setLocal assigns rhs (typed already as x, when not nil) to a local,
// which keeps its type: an integer local takes no float, because the
// first assignment decided it and a silent truncation would lose the
// fraction.
func (t *typer) setLocal(l *ast.IdentExpr, rhs ast.Expr, x Expr) Stmt {
	b, _ := t.lookup(l.Value)
	if b.arr != nil {
		t.fail(l.Line(), "the array %s cannot be assigned", l.Value)
	}
	local := &t.prog.Locals[b.slot]
	if x == nil {
		x = t.expr(rhs, local.Type)
	}
	if local.Type == Void {
		if x.Type() == Void {
			t.fail(rhs.Line(), "%s has no value", exprName(rhs))
		}
		local.Type = x.Type()
	}
	if w := join(local.Type, x.Type()); t.widen != nil && local.Type != Bool && x.Type() != Bool && w != local.Type {
		if t.fixed[b.slot] {
			what := "a " + local.Type.String()
			if local.Type == Int {
				what = "an integer"
			}
			t.fail(l.Line(), "%s is %s parameter (its argument is %s) and cannot take a %s; copy it into a local first (local v = %s)", l.Value, what, what, x.Type(), l.Value)
		}
		panic(widened{slot: b.slot, to: w})
	}
	return &Set{Slot: b.slot, X: t.convertTo(x, local.Type, l.Value, l.Line())}
}

// convertTo converts x to a local's type where that loses nothing a user
// would not expect: integers to floats, floats to floats.
func (t *typer) convertTo(x Expr, to Type, name string, line int) Expr {
	from := x.Type()
	switch {
	case from == to:
		return x
	case to.IsFloat() && (from == Int || from.IsFloat()):
		return t.to(x, to)
	case to == Int && from.IsFloat():
		t.fail(line, "%s is an integer (from its first assignment) and cannot take a %s; give it a float first value (0.0) or use math.floor", name, from)
	}
	t.fail(line, "%s is %s and cannot take %s", name, to, from)
	return nil
}

func (t *typer) numeric(x Expr, e ast.Expr) {
	if x.Type() != Int && !x.Type().IsFloat() {
		t.fail(e.Line(), "a number is expected, got %s", x.Type())
	}
}

func (t *typer) numericFor(st *ast.NumberForStmt) Stmt {
	start, stop := t.expr(st.Init, Void), t.expr(st.Limit, Void)
	var step Expr = &Const{T: Int, I: 1}
	if st.Step != nil {
		step = t.expr(st.Step, Void)
	}
	t.numeric(start, st.Init)
	t.numeric(stop, st.Limit)
	if st.Step != nil {
		t.numeric(step, st.Step)
	}
	typ := join(join(start.Type(), stop.Type()), step.Type())
	t.names = append(t.names, map[string]binding{})
	slot := t.newLocal(st.Name, typ)
	typ = t.prog.Locals[slot].Type
	t.bind(st.Name, binding{slot: slot})
	body := t.block(st.Stmts)
	t.names = t.names[:len(t.names)-1]
	return &For{Slot: slot, Start: t.to(start, typ), Stop: t.to(stop, typ), Step: t.to(step, typ), Body: body}
}

// join is the type of arithmetic between a and b: integers stay integers,
// float64 wins over float32, float32 over integers.
func join(a, b Type) Type {
	switch {
	case a == Float64 || b == Float64:
		return Float64
	case a == Float32 || b == Float32:
		return Float32
	}
	return Int
}

// to converts x to typ, folding constants so that literals adapt. An
// integer rounds to float32 once, as C's (float) of a long long does,
// not through float64.
func (t *typer) to(x Expr, typ Type) Expr {
	if x.Type() == typ {
		return x
	}
	if c, ok := x.(*Const); ok && typ.IsFloat() {
		f := c.F
		switch {
		case c.T == Int && typ == Float32:
			f = float64(float32(c.I))
		case c.T == Int:
			f = float64(c.I)
		case typ == Float32:
			f = float64(float32(f))
		}
		return &Const{T: typ, F: f}
	}
	return &Convert{X: x, T: typ}
}

func isFloatText(s string) bool {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return false
	}
	return strings.ContainsAny(s, ".eE")
}

// number types a numeric literal: an integer where it is written as one
// (whatever the context: `(i * i) % 7` stored into a float array is
// integer work), otherwise a float of hint's type when that is a float
// type, of the kernel's default float when not.
func (t *typer) number(ex *ast.NumberExpr, hint Type) Expr {
	v, err := parseNumber(ex.Value)
	if err != nil {
		t.fail(ex.Line(), "malformed number %s", ex.Value)
	}
	if !isFloatText(ex.Value) && v == math.Trunc(v) && math.Abs(v) < 1<<63 {
		return &Const{T: Int, I: int64(v)}
	}
	typ := t.defaultFloat
	if hint.IsFloat() {
		typ = hint
	}
	return t.to(&Const{T: Float64, F: v}, typ)
}

func parseNumber(s string) (float64, error) {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		u, err := strconv.ParseUint(s[2:], 16, 64)
		return float64(u), err
	}
	return strconv.ParseFloat(s, 64)
}
