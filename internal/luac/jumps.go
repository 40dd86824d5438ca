package luac

import "github.com/yuin/gopher-lua/ast"

// gopher-lua (v1.1.2) threads jumps to jumps when it finishes a function:
// a JMP whose target is another JMP is pointed at that one's target. It
// reads the target's offset as if it were still a label number, which it
// no longer is when the target lies earlier in the code and has already
// been resolved. A loop jumps back to the start of its body, so a loop
// whose body starts with a jump (a break, an if whose condition is a
// constant, a while loop) jumps somewhere unrelated when it goes round:
//
//	for _, v in ipairs({1, 2}) do print(v) end
//	for k in pairs({1}) do break end   -- back into the first loop, forever
//
// Such a body gets a first statement that compiles to one LOADNIL, a
// local nothing can name, so that the back jump lands on an instruction
// that is not a jump. Loops whose bodies start otherwise are left alone.

// jumpTargetName is the guard's local; like the assignment temporaries it
// contains characters the lexer never produces.
const jumpTargetName = "(loop start)"

// guardLoopBody prepends the guard to a loop body that may start with a
// jump.
func guardLoopBody(body []ast.Stmt) []ast.Stmt {
	if !mayStartWithJump(body) {
		return body
	}
	guard := &ast.LocalAssignStmt{Names: []string{jumpTargetName}}
	copyPos(guard, body[0])
	block := &ast.DoBlockStmt{Stmts: []ast.Stmt{guard}}
	copyPos(block, body[0])
	return append([]ast.Stmt{block}, body...)
}

// mayStartWithJump reports whether the code for stmts may begin with a
// JMP: statements that compile to nothing (labels, empty blocks) are
// passed over.
func mayStartWithJump(stmts []ast.Stmt) bool {
	for _, s := range stmts {
		switch st := s.(type) {
		case *ast.LabelStmt:
			continue
		case *ast.DoBlockStmt:
			if len(st.Stmts) == 0 {
				continue
			}
			return mayStartWithJump(st.Stmts)
		case *ast.RepeatStmt:
			if len(st.Stmts) == 0 {
				return constantLead(st.Condition)
			}
			return mayStartWithJump(st.Stmts)
		case *ast.BreakStmt, *ast.GotoStmt, *ast.WhileStmt:
			return true
		case *ast.IfStmt:
			return constantLead(st.Condition)
		}
		return false
	}
	return false
}

// constantLead reports whether a condition's code may begin with a jump
// rather than a test: the compiler folds a constant where the condition
// starts.
func constantLead(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.TrueExpr, *ast.FalseExpr, *ast.NilExpr, *ast.NumberExpr, *ast.StringExpr:
		return true
	case *ast.UnaryNotOpExpr:
		return constantLead(x.Expr)
	case *ast.LogicalOpExpr:
		return constantLead(x.Lhs)
	}
	return false
}
