package jit

import (
	"math"

	"github.com/yuin/gopher-lua/ast"
)

// expr types e; hint is the type the context wants (Void for none), which
// only literals follow.
func (t *typer) expr(e ast.Expr, hint Type) Expr {
	line := e.Line()
	switch ex := e.(type) {
	case *ast.NumberExpr:
		return t.number(ex, hint)
	case *ast.TrueExpr:
		return &Const{T: Bool, B: true}
	case *ast.FalseExpr:
		return &Const{T: Bool}
	case *ast.IdentExpr:
		return t.name(ex, hint)
	case *ast.AttrGetExpr:
		return t.attrExpr(ex, hint)
	case *ast.FuncCallExpr:
		return t.callExpr(ex, hint)
	case *ast.ArithmeticOpExpr:
		return t.arith(ex, hint)
	case *ast.RelationalOpExpr:
		x, y := t.pair(ex.Lhs, ex.Rhs, Void)
		return t.compare(ex, x, y)
	case *ast.LogicalOpExpr:
		x, y := t.cond(ex.Lhs), t.cond(ex.Rhs)
		return &Logic{Op: ex.Operator, X: x, Y: y}
	case *ast.UnaryMinusOpExpr:
		x := t.expr(ex.Expr, hint)
		t.numeric(x, ex.Expr)
		if c, ok := x.(*Const); ok {
			return &Const{T: c.T, I: -c.I, F: -c.F}
		}
		return &Neg{X: x}
	case *ast.UnaryNotOpExpr:
		return &Not{X: t.cond(ex.Expr)}
	case *ast.UnaryLenOpExpr:
		return &Size{Arr: t.array(ex.Expr)}
	}
	t.fail(line, "%s is not allowed in a kernel", exprName(e))
	return nil
}

func (t *typer) name(ex *ast.IdentExpr, hint Type) Expr {
	b, ok := t.lookup(ex.Value)
	if !ok && t.isCaptured(ex.Value, ex.Line()) {
		return t.capturedConst(ex.Value, ex.Line(), hint)
	}
	if !ok {
		t.global(ex)
	}
	if b.arr != nil {
		t.fail(ex.Line(), "the array %s can only be indexed (%s[i]), measured (#%s, %s.shape[k]) or passed to an atomic (kernels.atomic_add, ...)", ex.Value, ex.Value, ex.Value, ex.Value)
	}
	typ := t.prog.Locals[b.slot].Type
	if typ == Void {
		t.fail(ex.Line(), "%s is read before it is assigned (declared on line %d)", ex.Value, b.line)
	}
	return &LocalGet{Slot: b.slot, T: typ}
}

// pair types two operands so that a literal takes the type of the other
// side: in x * 2 with x float32 the 2 is a float32.
func (t *typer) pair(l, r ast.Expr, hint Type) (Expr, Expr) {
	lLit, rLit := isLiteral(l), isLiteral(r)
	var x, y Expr
	switch {
	case lLit && !rLit:
		y = t.expr(r, hint)
		x = t.expr(l, literalHint(y.Type(), hint))
	case rLit && !lLit:
		x = t.expr(l, hint)
		y = t.expr(r, literalHint(x.Type(), hint))
	default:
		x, y = t.expr(l, hint), t.expr(r, hint)
	}
	return x, y
}

func literalHint(other, hint Type) Type {
	if other.IsFloat() {
		return other
	}
	return hint
}

// isLiteral reports whether e is a number written in the source, perhaps
// negated, or math.pi/math.huge.
func isLiteral(e ast.Expr) bool {
	switch ex := e.(type) {
	case *ast.NumberExpr:
		return true
	case *ast.UnaryMinusOpExpr:
		return isLiteral(ex.Expr)
	case *ast.AttrGetExpr:
		id, ok := ex.Object.(*ast.IdentExpr)
		return ok && id.Value == "math"
	}
	return false
}

func (t *typer) arith(ex *ast.ArithmeticOpExpr, hint Type) Expr {
	x, y := t.pair(ex.Lhs, ex.Rhs, hint)
	t.numeric(x, ex.Lhs)
	t.numeric(y, ex.Rhs)
	typ := join(x.Type(), y.Type())
	if typ == Int && (ex.Operator == "/" || ex.Operator == "^") {
		// Lua's / and ^ are float operations; Numba's int / int is float64.
		typ = Float64
	}
	a := &Arith{Op: ex.Operator, X: t.to(x, typ), Y: t.to(y, typ), T: typ}
	if c, isConst := a.Y.(*Const); typ == Int && ex.Operator == "%" && (!isConst || c.I == 0) {
		a.Trap = t.trap(ex.Line(), "integer modulo by zero: the divisor of %s is 0, in %s", luaText(ex), t.what)
	}
	return a
}

func (t *typer) compare(ex *ast.RelationalOpExpr, x, y Expr) Expr {
	if x.Type() == Bool || y.Type() == Bool {
		if x.Type() != y.Type() || ex.Operator != "==" && ex.Operator != "~=" {
			t.fail(ex.Line(), "cannot compare %s %s %s", x.Type(), ex.Operator, y.Type())
		}
		return &Compare{Op: ex.Operator, X: x, Y: y}
	}
	t.numeric(x, ex.Lhs)
	t.numeric(y, ex.Rhs)
	typ := join(x.Type(), y.Type())
	if typ == Float32 && (x.Type() == Int || y.Type() == Int) {
		// float64 holds both exactly (integers up to 2^53), so the
		// comparison is Lua's: i * i == 25010000.0 is false for i = 5001,
		// where float32 would round both sides to one value. A float
		// literal is read again as a float64 for it.
		typ = Float64
		if isLiteral(ex.Lhs) {
			x = t.expr(ex.Lhs, Float64)
		}
		if isLiteral(ex.Rhs) {
			y = t.expr(ex.Rhs, Float64)
		}
	}
	return &Compare{Op: ex.Operator, X: t.to(x, typ), Y: t.to(y, typ)}
}

// array resolves a name that must be an array.
func (t *typer) array(e ast.Expr) *Array {
	id, ok := e.(*ast.IdentExpr)
	if ok {
		if b, found := t.lookup(id.Value); found && b.arr != nil {
			return b.arr
		}
	}
	t.fail(e.Line(), "%s is not an array parameter or a shared array", luaText(e))
	return nil
}

// attrExpr types A[i][j], A.shape[k] and math.pi, math.huge.
func (t *typer) attrExpr(ex *ast.AttrGetExpr, hint Type) Expr {
	if id, ok := ex.Object.(*ast.IdentExpr); ok && id.Value == "math" {
		v := math.Pi
		if keyText(ex.Key) == "huge" {
			v = math.Inf(1)
		}
		typ := t.defaultFloat
		if hint.IsFloat() {
			typ = hint
		}
		return t.to(&Const{T: Float64, F: v}, typ)
	}
	if x := t.indexField(ex); x != nil {
		return x
	}
	if id, ok := ex.Object.(*ast.IdentExpr); ok && id.Value == "kernels" && keyText(ex.Key) == "warpsize" {
		return &Const{T: Int, I: WarpSize}
	}
	if inner, ok := ex.Object.(*ast.AttrGetExpr); ok && keyText(inner.Key) == "shape" {
		if _, isString := inner.Key.(*ast.StringExpr); isString {
			return t.shape(t.array(inner.Object), ex)
		}
	}
	if keyText(ex.Key) == "shape" {
		t.fail(ex.Line(), "index the shape: %s.shape[k]", exprName(ex.Object))
	}
	arr, idx := t.element(ex)
	return &Load{Arr: arr, Index: idx, Line: ex.Line()}
}

// shape is A.shape[k] with k a literal, because a kernel receives each
// dimension as a parameter of its own.
func (t *typer) shape(arr *Array, ex *ast.AttrGetExpr) Expr {
	n, ok := ex.Key.(*ast.NumberExpr)
	k, err := parseNumber(valueOr(n))
	if !ok || err != nil || k != math.Trunc(k) || k < 1 || int(k) > arr.Rank {
		t.fail(ex.Line(), "%s.shape[k] needs k to be a literal from 1 to %d", arr.Name, arr.Rank)
	}
	return &Dim{Arr: arr, K: int(k) - 1}
}

func valueOr(n *ast.NumberExpr) string {
	if n == nil {
		return ""
	}
	return n.Value
}

// element resolves A[i], A[i][j], ...: one integer index per dimension.
func (t *typer) element(ex *ast.AttrGetExpr) (*Array, []Expr) {
	var keys []ast.Expr
	var e ast.Expr = ex
	for {
		a, ok := e.(*ast.AttrGetExpr)
		if !ok {
			break
		}
		keys = append([]ast.Expr{a.Key}, keys...)
		e = a.Object
	}
	arr := t.array(e)
	if len(keys) != arr.Rank {
		t.fail(ex.Line(), "%s has %d dimension(s) and is indexed with %d index(es); write %s", arr.Name, arr.Rank, len(keys), indexForm(arr))
	}
	idx := make([]Expr, len(keys))
	for i, k := range keys {
		idx[i] = t.index(k, arr)
	}
	return arr, idx
}

func indexForm(arr *Array) string {
	s := arr.Name
	for i := 0; i < arr.Rank; i++ {
		s += "[" + string(rune('i'+i)) + "]"
	}
	return s
}

func (t *typer) index(k ast.Expr, arr *Array) Expr {
	x := t.expr(k, Int)
	if x.Type() != Int {
		t.fail(k.Line(), "an index of %s must be an integer, not %s (use math.floor)", arr.Name, x.Type())
	}
	return x
}
