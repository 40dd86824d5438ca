package luac

import "github.com/yuin/gopher-lua/ast"

// gopher-lua compiles the right-hand side of `x = e`, where x is a local,
// straight into x's register, and for some expressions that register is
// not where the value ends up or is written before e has finished reading
// it (upstream, v1.1.2):
//
//   - an `and`/`or` whose deciding operand is not a local leaves that
//     operand in a scratch register and jumps past the move into x:
//     `w = t.k and 1` keeps w's old value when t.k is false;
//   - a nested `and`/`or` stores an intermediate result into x before
//     reading x: `x = (v or 1) and x` gives v;
//   - `x = (...)` writes past x and leaves the stack inconsistent (a Go
//     nil-pointer panic later on).
//
// The cure is the one a local declaration already gets: evaluate into a
// fresh register, then move. The rewrite is applied only where the target
// may be a local, so globals, upvalues and fields compile as before.

// singleAssign returns the statement for the one-target, one-value
// assignment st: st itself, or
//
//	do local (assign 1) = <value>; <target> = (assign 1) end
//
// where the compiler would evaluate the value into the target's register.
func (r *rewriter) singleAssign(st *ast.AssignStmt) ast.Stmt {
	if len(st.Lhs) != 1 || len(st.Rhs) != 1 {
		return st
	}
	target, ok := st.Lhs[0].(*ast.IdentExpr)
	if !ok || !r.declared[target.Value] {
		return st
	}
	switch v := st.Rhs[0].(type) {
	case *ast.LogicalOpExpr:
	case *ast.Comma3Expr:
		if !v.AdjustRet {
			return st
		}
	default:
		return st
	}
	name := tempName(1)
	local := &ast.LocalAssignStmt{Names: []string{name}, Exprs: st.Rhs}
	copyPos(local, st)
	st.Rhs = []ast.Expr{identAt(name, st.Rhs[0])}
	block := &ast.DoBlockStmt{Stmts: []ast.Stmt{local, st}}
	copyPos(block, st)
	return block
}

// declare records names the current function declares.
func (r *rewriter) declare(names []string) {
	if r.declared == nil {
		return
	}
	for _, n := range names {
		r.declared[n] = true
	}
}

// Names for a generic for's evaluated expressions; like the assignment
// temporaries, no Lua source can spell them.
var iteratorNames = []string{"(for 1)", "(for 2)", "(for 3)"}

// iteratorFirst returns the generic for st with its expressions evaluated
// before the loop:
//
//	do
//	  local (for 1), (for 2), (for 3) = <explist>
//	  for <names> in (for 1), (for 2), (for 3) do <body> end
//	end
//
// gopher-lua compiles the explist into the loop's state registers after
// declaring them, and a call whose function or receiver is itself computed
// (`f().g(x)`, `f():it()`, `(a .. b):gmatch(p)`) overwrites them or reads
// the wrong ones. A local declaration evaluates the same explist correctly,
// with the same adjustment to three values, and the loop then copies them.
// The common shapes, whose callee is a name or a field of one (`pairs(t)`,
// `string.gmatch(s, p)`, `obj:iter()`), compile correctly and are left as
// they are, so they cost nothing and kernels.jit still sees a generic for.
func iteratorFirst(st *ast.GenericForStmt) ast.Stmt {
	simple := true
	for _, e := range st.Exprs {
		simple = simple && plainIterator(e)
	}
	if simple {
		return st
	}
	local := &ast.LocalAssignStmt{Names: iteratorNames, Exprs: st.Exprs}
	copyPos(local, st)
	exprs := make([]ast.Expr, len(iteratorNames))
	for i, name := range iteratorNames {
		at := ast.PositionHolder(st)
		if i < len(st.Exprs) {
			at = st.Exprs[i]
		}
		exprs[i] = identAt(name, at)
	}
	st.Exprs = exprs
	block := &ast.DoBlockStmt{Stmts: []ast.Stmt{local, st}}
	copyPos(block, st)
	return block
}

// plainIterator reports an expression of a generic for's explist that
// gopher-lua compiles correctly there: a name, a constant, or a call of a
// named function or of a method of a named object (arguments are compiled
// above the call's own registers and may be anything).
func plainIterator(e ast.Expr) bool {
	switch ex := e.(type) {
	case *ast.IdentExpr:
		return true
	case *ast.FuncCallExpr:
		if ex.Func != nil {
			return namePath(ex.Func)
		}
		return namePath(ex.Receiver)
	}
	return isConstant(e)
}

// namePath reports a name or a chain of constant-key fields of one (a.b.c).
func namePath(e ast.Expr) bool {
	for {
		switch ex := e.(type) {
		case *ast.IdentExpr:
			return true
		case *ast.AttrGetExpr:
			if !isConstant(ex.Key) {
				return false
			}
			e = ex.Object
		default:
			return false
		}
	}
}
