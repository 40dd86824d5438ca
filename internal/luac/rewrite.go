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

// rewriter holds what one chunk's rewrite needs to know as it walks.
type rewriter struct {
	// literals counts the number and string literals of the function being
	// walked, less those moved out into functions of their own; each is a
	// constant the compiler looks up one by one (see tables.go).
	literals int
	mode     walkMode
	err      *rewriteError // the first thing the rewrite refuses

	// What a countOnly walk finds besides literals: a use of the
	// function's `...`; the name arg anywhere, nested functions included;
	// a return, goto, label or break (outside a loop of its own) that
	// would leave or jump within the function; and the names used.
	varargs bool
	arg     bool
	escapes bool
	// stack records a use of a function that finds its target by stack
	// level (setfenv, getfenv, module, the debug library).
	stack bool
	names map[string]bool
	depth int // function literals entered
	loops int // loops entered

	// declared holds every name the function being rewritten has declared
	// so far (parameters and locals, whatever block they were in): a
	// superset of the locals in scope, which is all singleAssign needs.
	declared map[string]bool
}

// walkMode is what a walk does besides visiting.
type walkMode int

const (
	// rewriteAll rewrites assignments and constructors, descending into
	// function literals.
	rewriteAll walkMode = iota
	// hoistTables wraps constructors (see hoist); function literals have
	// been rewritten already and are left alone.
	hoistTables
	// countOnly changes nothing, to measure an expression or statement
	// (see measure).
	countOnly
)

// rewriteChunk rewrites, in place, every multiple assignment in chunk and in
// every function literal it contains, and every table constructor that
// gopher-lua would compile wrongly or slowly.
func rewriteChunk(chunk []ast.Stmt) ([]ast.Stmt, *rewriteError) {
	var r rewriter
	chunk = r.function(nil, chunk)
	return chunk, r.err
}

// rewriteError is a program the rewrite cannot compile correctly.
type rewriteError struct {
	line int
	msg  string
}

// function rewrites one function's body and, if it is left with too many
// constants, moves constructors and then statements out of it (tables.go).
func (r *rewriter) function(params []string, stmts []ast.Stmt) []ast.Stmt {
	outer, outerDeclared := r.literals, r.declared
	r.literals = 0
	r.declared = make(map[string]bool, len(params)+1)
	r.declare(params)
	// A method's implicit parameter; declaring it in every function only
	// costs a register move where a plain function assigns a global self.
	r.declared["self"] = true
	r.block(stmts)
	if r.literals > functionLiterals {
		r.hoist(stmts)
	}
	if r.literals > functionLiterals {
		stmts = group(stmts)
	}
	r.literals, r.declared = outer, outerDeclared
	return stmts
}

func (r *rewriter) block(stmts []ast.Stmt) {
	for i, s := range stmts {
		stmts[i] = r.stmt(s)
	}
}

func (r *rewriter) stmt(s ast.Stmt) ast.Stmt {
	switch s.(type) {
	case *ast.ReturnStmt, *ast.GotoStmt, *ast.LabelStmt:
		r.escapes = r.escapes || r.depth == 0
	case *ast.BreakStmt:
		r.escapes = r.escapes || r.depth == 0 && r.loops == 0
	}
	switch st := s.(type) {
	case *ast.AssignStmt:
		r.exprs(st.Lhs)
		r.exprs(st.Rhs)
		if len(st.Lhs) > 1 || len(st.Rhs) > 1 && r.mode == rewriteAll {
			if block, ok := splitAssign(st); ok {
				return block
			}
		}
		if r.mode == rewriteAll {
			return r.singleAssign(st)
		}
	case *ast.LocalAssignStmt:
		r.exprs(st.Exprs)
		r.declare(st.Names)
	case *ast.FuncCallStmt:
		st.Expr = r.expr(st.Expr)
	case *ast.DoBlockStmt:
		r.block(st.Stmts)
	case *ast.WhileStmt:
		st.Condition = r.expr(st.Condition)
		r.loop(st.Stmts)
		st.Stmts = guardLoopBody(st.Stmts)
	case *ast.RepeatStmt:
		r.loop(st.Stmts)
		st.Condition = r.expr(st.Condition)
		st.Stmts = guardLoopBody(st.Stmts)
	case *ast.IfStmt:
		st.Condition = r.expr(st.Condition)
		r.block(st.Then)
		r.block(st.Else)
	case *ast.NumberForStmt:
		st.Init = r.expr(st.Init)
		st.Limit = r.expr(st.Limit)
		st.Step = r.expr(st.Step)
		r.declare([]string{st.Name})
		r.loop(st.Stmts)
	case *ast.GenericForStmt:
		r.exprs(st.Exprs)
		r.declare(st.Names)
		r.loop(st.Stmts)
		st.Stmts = guardLoopBody(st.Stmts)
		if r.mode == rewriteAll {
			return iteratorFirst(st)
		}
	case *ast.FuncDefStmt:
		if st.Name != nil {
			st.Name.Func = r.expr(st.Name.Func)
			st.Name.Receiver = r.expr(st.Name.Receiver)
		}
		st.Func = r.expr(st.Func).(*ast.FunctionExpr)
	case *ast.ReturnStmt:
		r.exprs(st.Exprs)
	}
	return s
}

func (r *rewriter) loop(body []ast.Stmt) {
	r.loops++
	r.block(body)
	r.loops--
}

func (r *rewriter) exprs(exprs []ast.Expr) {
	for i, e := range exprs {
		exprs[i] = r.expr(e)
	}
}

// expr rewrites what e contains and returns what stands in e's place: e
// itself, except for a table constructor that tables.go replaces.
func (r *rewriter) expr(e ast.Expr) ast.Expr {
	switch ex := e.(type) {
	case nil:
	case *ast.NumberExpr, *ast.StringExpr:
		if r.depth == 0 {
			r.literals++
		}
	case *ast.Comma3Expr:
		r.varargs = r.varargs || r.depth == 0
	case *ast.IdentExpr:
		if r.mode == countOnly {
			r.arg = r.arg || ex.Value == "arg"
			r.stack = r.stack || stackLevelNames[ex.Value]
			if r.names != nil {
				r.names[ex.Value] = true
			}
		}
	case *ast.FunctionExpr:
		switch r.mode {
		case rewriteAll:
			var params []string
			if ex.ParList != nil {
				params = ex.ParList.Names
			}
			ex.Stmts = r.function(params, ex.Stmts)
		case countOnly:
			loops := r.loops
			r.depth, r.loops = r.depth+1, 0
			r.block(ex.Stmts)
			r.depth, r.loops = r.depth-1, loops
		}
	case *ast.TableExpr:
		if r.mode == hoistTables {
			return r.hoistTable(ex)
		}
		before := r.literals
		for _, f := range ex.Fields {
			if f != nil {
				f.Key = r.expr(f.Key)
				f.Value = r.expr(f.Value)
			}
		}
		if r.mode == countOnly {
			return ex
		}
		return r.table(ex, r.literals-before)
	case *ast.AttrGetExpr:
		ex.Object = r.expr(ex.Object)
		ex.Key = r.expr(ex.Key)
	case *ast.FuncCallExpr:
		ex.Func = r.expr(ex.Func)
		ex.Receiver = r.expr(ex.Receiver)
		r.exprs(ex.Args)
	case *ast.LogicalOpExpr:
		ex.Lhs = r.expr(ex.Lhs)
		ex.Rhs = r.expr(ex.Rhs)
	case *ast.RelationalOpExpr:
		ex.Lhs = r.expr(ex.Lhs)
		ex.Rhs = r.expr(ex.Rhs)
	case *ast.StringConcatOpExpr:
		ex.Lhs = r.expr(ex.Lhs)
		ex.Rhs = r.expr(ex.Rhs)
	case *ast.ArithmeticOpExpr:
		ex.Lhs = r.expr(ex.Lhs)
		ex.Rhs = r.expr(ex.Rhs)
	case *ast.UnaryMinusOpExpr:
		ex.Expr = r.expr(ex.Expr)
	case *ast.UnaryNotOpExpr:
		ex.Expr = r.expr(ex.Expr)
	case *ast.UnaryLenOpExpr:
		ex.Expr = r.expr(ex.Expr)
	}
	return e
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
