package luac

import (
	"runtime"
	"sync"
	"weak"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// trees maps each function prototype Load compiled to the syntax tree it
// was compiled from, so that kernels.jit can translate a Lua function the
// user passes it. The keys are weak and each entry is deleted when its
// prototype is collected, so a script that loads chunks in a loop does not
// keep their trees: the map holds a tree exactly as long as some closure of
// its function can still be called. The map is shared by every LState of
// the process because prototypes are (the trees are read, never changed,
// once recorded).
var trees sync.Map // weak.Pointer[lua.FunctionProto] -> *ast.FunctionExpr

// FunctionTree returns the syntax tree of fn's body as Load compiled it, or
// false for a Go function or one compiled elsewhere.
func FunctionTree(fn *lua.LFunction) (*ast.FunctionExpr, bool) {
	if fn == nil || fn.Proto == nil {
		return nil, false
	}
	t, ok := trees.Load(weak.Make(fn.Proto))
	if !ok {
		return nil, false
	}
	return t.(*ast.FunctionExpr), true
}

// recordTrees pairs the function literals of body with proto's nested
// prototypes. gopher-lua appends a prototype each time it compiles a
// function literal, and it compiles a function's statements and
// expressions in source order, so the literals in that order are the
// prototypes in theirs. Where the count or a line does not agree (a
// compiler that skipped or reordered one), nothing of that level is
// recorded: a missing tree is a clear error in kernels.jit, a wrong one
// would translate another function.
func recordTrees(proto *lua.FunctionProto, body []ast.Stmt) {
	var lits []*ast.FunctionExpr
	collectFunctions(body, &lits)
	if len(lits) != len(proto.FunctionPrototypes) {
		return
	}
	for i, child := range proto.FunctionPrototypes {
		if lits[i].Line() != child.LineDefined || lits[i].LastLine() != child.LastLineDefined {
			return
		}
	}
	for i, child := range proto.FunctionPrototypes {
		key := weak.Make(child)
		trees.Store(key, lits[i])
		runtime.AddCleanup(child, func(k weak.Pointer[lua.FunctionProto]) { trees.Delete(k) }, key)
		recordTrees(child, lits[i].Stmts)
	}
}

// collectFunctions appends the function literals of stmts, in source
// order, without entering them.
func collectFunctions(stmts []ast.Stmt, out *[]*ast.FunctionExpr) {
	for _, s := range stmts {
		collectStmt(s, out)
	}
}

func collectStmt(s ast.Stmt, out *[]*ast.FunctionExpr) {
	exprs := func(es []ast.Expr) {
		for _, e := range es {
			collectExpr(e, out)
		}
	}
	switch st := s.(type) {
	case *ast.AssignStmt:
		exprs(st.Lhs)
		exprs(st.Rhs)
	case *ast.LocalAssignStmt:
		exprs(st.Exprs)
	case *ast.FuncCallStmt:
		collectExpr(st.Expr, out)
	case *ast.DoBlockStmt:
		collectFunctions(st.Stmts, out)
	case *ast.WhileStmt:
		collectExpr(st.Condition, out)
		collectFunctions(st.Stmts, out)
	case *ast.RepeatStmt:
		collectFunctions(st.Stmts, out)
		collectExpr(st.Condition, out)
	case *ast.IfStmt:
		collectExpr(st.Condition, out)
		collectFunctions(st.Then, out)
		collectFunctions(st.Else, out)
	case *ast.NumberForStmt:
		exprs([]ast.Expr{st.Init, st.Limit, st.Step})
		collectFunctions(st.Stmts, out)
	case *ast.GenericForStmt:
		exprs(st.Exprs)
		collectFunctions(st.Stmts, out)
	case *ast.FuncDefStmt:
		if st.Name.Func == nil {
			collectExpr(st.Name.Receiver, out)
		}
		*out = append(*out, st.Func)
	case *ast.ReturnStmt:
		exprs(st.Exprs)
	}
}

func collectExpr(e ast.Expr, out *[]*ast.FunctionExpr) {
	switch ex := e.(type) {
	case *ast.FunctionExpr:
		*out = append(*out, ex)
	case *ast.AttrGetExpr:
		collectExpr(ex.Object, out)
		collectExpr(ex.Key, out)
	case *ast.TableExpr:
		for _, f := range ex.Fields {
			if f.Key != nil {
				collectExpr(f.Key, out)
			}
			collectExpr(f.Value, out)
		}
	case *ast.FuncCallExpr:
		if ex.Func != nil {
			collectExpr(ex.Func, out)
		} else {
			collectExpr(ex.Receiver, out)
		}
		for _, a := range ex.Args {
			collectExpr(a, out)
		}
	case *ast.LogicalOpExpr:
		collectExpr(ex.Lhs, out)
		collectExpr(ex.Rhs, out)
	case *ast.RelationalOpExpr:
		collectExpr(ex.Lhs, out)
		collectExpr(ex.Rhs, out)
	case *ast.StringConcatOpExpr:
		collectExpr(ex.Lhs, out)
		collectExpr(ex.Rhs, out)
	case *ast.ArithmeticOpExpr:
		collectExpr(ex.Lhs, out)
		collectExpr(ex.Rhs, out)
	case *ast.UnaryMinusOpExpr:
		collectExpr(ex.Expr, out)
	case *ast.UnaryNotOpExpr:
		collectExpr(ex.Expr, out)
	case *ast.UnaryLenOpExpr:
		collectExpr(ex.Expr, out)
	}
}
