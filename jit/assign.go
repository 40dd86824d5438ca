package jit

import (
	"strconv"

	"github.com/yuin/gopher-lua/ast"
)

// splitAssign turns a multiple assignment into single ones with Lua 5.1's
// meaning: a do-block that first evaluates every target's array and index,
// then every value, into fresh locals, and then stores them right to left,
// as the reference implementation does (so `x[i], i = i, 1` stores into the
// element i named before the statement). The locals' names ("(assign 1)",
// ...) hold characters no Lua name can, so they never capture a user's
// variable; cname makes them C names.
func splitAssign(st *ast.AssignStmt) *ast.DoBlockStmt {
	var names []string
	var exprs []ast.Expr
	temp := func(at ast.Expr) *ast.IdentExpr {
		id := &ast.IdentExpr{Value: "(assign " + strconv.Itoa(len(names)+1) + ")"}
		id.SetLine(at.Line())
		id.SetLastLine(at.Line())
		names = append(names, id.Value)
		return id
	}
	capture := func(e ast.Expr) ast.Expr {
		switch e.(type) {
		case *ast.NumberExpr, *ast.StringExpr, *ast.NilExpr, *ast.TrueExpr, *ast.FalseExpr:
			return e
		}
		id := temp(e)
		exprs = append(exprs, e)
		return id
	}
	// an element's array is a name (an array cannot be assigned, so it is
	// the same after the values), and each of its indices is captured:
	// x[i][j] becomes x[t1][t2]
	var element func(e ast.Expr) ast.Expr
	element = func(e ast.Expr) ast.Expr {
		l, ok := e.(*ast.AttrGetExpr)
		if !ok {
			if _, isName := e.(*ast.IdentExpr); isName {
				return e
			}
			return capture(e)
		}
		target := &ast.AttrGetExpr{Object: element(l.Object), Key: capture(l.Key)}
		target.SetLine(l.Line())
		return target
	}
	targets := make([]ast.Expr, len(st.Lhs))
	for i, lhs := range st.Lhs {
		targets[i] = lhs
		if _, ok := lhs.(*ast.AttrGetExpr); ok {
			targets[i] = element(lhs)
		}
	}
	values := make([]ast.Expr, len(st.Lhs))
	for i, lhs := range st.Lhs {
		values[i] = temp(lhs)
	}
	local := &ast.LocalAssignStmt{Names: names, Exprs: append(exprs, st.Rhs...)}
	local.SetLine(st.Line())
	stmts := []ast.Stmt{local}
	for i := len(targets) - 1; i >= 0; i-- {
		assign := &ast.AssignStmt{Lhs: []ast.Expr{targets[i]}, Rhs: []ast.Expr{values[i]}}
		assign.SetLine(st.Lhs[i].Line())
		stmts = append(stmts, assign)
	}
	block := &ast.DoBlockStmt{Stmts: stmts}
	block.SetLine(st.Line())
	return block
}
