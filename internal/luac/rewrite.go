package luac

import (
	"strconv"

	"github.com/yuin/gopher-lua/ast"
)

// tempPrefix starts every temporary's name. The lexer only produces names
// made of letters, digits and '_', so "(assign 1)" can never be written in
// Lua source and can never collide with, capture or shadow a user's name.
const tempPrefix = "(assign "

// tempNames caches the names so that rewriting a chunk does not format the
// same strings over and over; numbering restarts with each statement (the
// temporaries live in their own do-block, and a nested statement can only
// sit inside a function literal, where it declares its own before use).
var tempNames = func() []string {
	names := make([]string, 32)
	for i := range names {
		names[i] = formatTempName(i + 1)
	}
	return names
}()

func formatTempName(n int) string {
	return tempPrefix + strconv.Itoa(n) + ")"
}

// rewriteChunk rewrites, in place, every multiple assignment in chunk and in
// every function literal it contains.
func rewriteChunk(chunk []ast.Stmt) {
	rewriteBlock(chunk)
}

func rewriteBlock(stmts []ast.Stmt) {
	for i, s := range stmts {
		stmts[i] = rewriteStmt(s)
	}
}

func rewriteStmt(s ast.Stmt) ast.Stmt {
	switch st := s.(type) {
	case *ast.AssignStmt:
		rewriteExprs(st.Lhs)
		rewriteExprs(st.Rhs)
		if len(st.Lhs) > 1 {
			if block, ok := splitAssign(st); ok {
				return block
			}
		}
	case *ast.LocalAssignStmt:
		rewriteExprs(st.Exprs)
	case *ast.FuncCallStmt:
		rewriteExpr(st.Expr)
	case *ast.DoBlockStmt:
		rewriteBlock(st.Stmts)
	case *ast.WhileStmt:
		rewriteExpr(st.Condition)
		rewriteBlock(st.Stmts)
	case *ast.RepeatStmt:
		rewriteBlock(st.Stmts)
		rewriteExpr(st.Condition)
	case *ast.IfStmt:
		rewriteExpr(st.Condition)
		rewriteBlock(st.Then)
		rewriteBlock(st.Else)
	case *ast.NumberForStmt:
		rewriteExpr(st.Init)
		rewriteExpr(st.Limit)
		rewriteExpr(st.Step)
		rewriteBlock(st.Stmts)
	case *ast.GenericForStmt:
		rewriteExprs(st.Exprs)
		rewriteBlock(st.Stmts)
	case *ast.FuncDefStmt:
		if st.Name != nil {
			rewriteExpr(st.Name.Func)
			rewriteExpr(st.Name.Receiver)
		}
		rewriteExpr(st.Func)
	case *ast.ReturnStmt:
		rewriteExprs(st.Exprs)
	}
	return s
}

func rewriteExprs(exprs []ast.Expr) {
	for _, e := range exprs {
		rewriteExpr(e)
	}
}

// rewriteExpr looks for function literals, the only place statements can
// hide inside an expression. Expressions themselves are never replaced.
func rewriteExpr(e ast.Expr) {
	switch ex := e.(type) {
	case nil:
	case *ast.FunctionExpr:
		rewriteBlock(ex.Stmts)
	case *ast.AttrGetExpr:
		rewriteExpr(ex.Object)
		rewriteExpr(ex.Key)
	case *ast.TableExpr:
		for _, f := range ex.Fields {
			if f != nil {
				rewriteExpr(f.Key)
				rewriteExpr(f.Value)
			}
		}
	case *ast.FuncCallExpr:
		rewriteExpr(ex.Func)
		rewriteExpr(ex.Receiver)
		rewriteExprs(ex.Args)
	case *ast.LogicalOpExpr:
		rewriteExpr(ex.Lhs)
		rewriteExpr(ex.Rhs)
	case *ast.RelationalOpExpr:
		rewriteExpr(ex.Lhs)
		rewriteExpr(ex.Rhs)
	case *ast.StringConcatOpExpr:
		rewriteExpr(ex.Lhs)
		rewriteExpr(ex.Rhs)
	case *ast.ArithmeticOpExpr:
		rewriteExpr(ex.Lhs)
		rewriteExpr(ex.Rhs)
	case *ast.UnaryMinusOpExpr:
		rewriteExpr(ex.Expr)
	case *ast.UnaryNotOpExpr:
		rewriteExpr(ex.Expr)
	case *ast.UnaryLenOpExpr:
		rewriteExpr(ex.Expr)
	}
}

// splitAssign turns one multiple assignment into a do-block that evaluates
// everything into fresh locals and then stores them one target at a time.
// It reports false, leaving the statement to the compiler, for a target the
// parser never produces.
func splitAssign(st *ast.AssignStmt) (ast.Stmt, bool) {
	for _, lhs := range st.Lhs {
		switch lhs.(type) {
		case *ast.IdentExpr, *ast.AttrGetExpr:
		default:
			return nil, false
		}
	}

	n := 0
	names := make([]string, 0, 2*len(st.Lhs)+len(st.Rhs))
	exprs := make([]ast.Expr, 0, cap(names))
	capture := func(e ast.Expr) ast.Expr {
		if isConstant(e) {
			return e
		}
		n++
		name := tempName(n)
		names = append(names, name)
		exprs = append(exprs, e)
		return identAt(name, e)
	}

	targets := make([]ast.Expr, len(st.Lhs))
	for i, lhs := range st.Lhs {
		switch l := lhs.(type) {
		case *ast.IdentExpr:
			targets[i] = l
		case *ast.AttrGetExpr:
			// Capturing the prefix and key first gives `t[i], i = 20, 30`
			// Lua 5.1's meaning: the store uses i's value from before the
			// statement.
			target := &ast.AttrGetExpr{Object: capture(l.Object), Key: capture(l.Key)}
			copyPos(target, l)
			targets[i] = target
		}
	}

	// One name per target; the right-hand side follows the left-hand
	// captures in a single local statement, so the compiler applies Lua's
	// adjustment rules (last call or `...` expands, surplus evaluated and
	// dropped, missing nil) exactly as it would have.
	values := make([]ast.Expr, len(st.Lhs))
	for i := range st.Lhs {
		n++
		name := tempName(n)
		names = append(names, name)
		if i < len(st.Rhs) {
			values[i] = identAt(name, st.Rhs[i])
		} else {
			values[i] = identAt(name, st.Lhs[i])
		}
	}
	exprs = append(exprs, st.Rhs...)

	local := &ast.LocalAssignStmt{Names: names, Exprs: exprs}
	copyPos(local, st)

	stmts := make([]ast.Stmt, 0, 1+len(targets))
	stmts = append(stmts, local)
	// Right to left, as the reference implementation stores.
	for i := len(targets) - 1; i >= 0; i-- {
		assign := &ast.AssignStmt{Lhs: []ast.Expr{targets[i]}, Rhs: []ast.Expr{values[i]}}
		copyPos(assign, st.Lhs[i])
		stmts = append(stmts, assign)
	}
	block := &ast.DoBlockStmt{Stmts: stmts}
	copyPos(block, st)
	return block, true
}

// tempName is the name of the statement's n-th temporary, counting from 1.
func tempName(n int) string {
	if n <= len(tempNames) {
		return tempNames[n-1]
	}
	return formatTempName(n)
}

// isConstant reports expressions that read no variable and have no effect,
// so they may be evaluated at any point without changing the program.
func isConstant(e ast.Expr) bool {
	switch e.(type) {
	case *ast.NumberExpr, *ast.StringExpr, *ast.NilExpr, *ast.TrueExpr, *ast.FalseExpr:
		return true
	}
	return false
}

func identAt(name string, at ast.PositionHolder) *ast.IdentExpr {
	id := &ast.IdentExpr{Value: name}
	copyPos(id, at)
	return id
}

func copyPos(dst, src ast.PositionHolder) {
	dst.SetLine(src.Line())
	last := src.LastLine()
	if last == 0 {
		last = src.Line()
	}
	dst.SetLastLine(last)
}
