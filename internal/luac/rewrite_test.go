package luac

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// collectAssigns returns every assignment statement in stmts, looking into
// nested blocks and function literals.
func collectAssigns(stmts []ast.Stmt) []*ast.AssignStmt {
	var found []*ast.AssignStmt
	var stmt func(ast.Stmt)
	var expr func(ast.Expr)
	block := func(ss []ast.Stmt) {
		for _, s := range ss {
			stmt(s)
		}
	}
	exprs := func(es []ast.Expr) {
		for _, e := range es {
			expr(e)
		}
	}
	expr = func(e ast.Expr) {
		switch ex := e.(type) {
		case *ast.FunctionExpr:
			block(ex.Stmts)
		case *ast.FuncCallExpr:
			expr(ex.Func)
			expr(ex.Receiver)
			exprs(ex.Args)
		case *ast.TableExpr:
			for _, f := range ex.Fields {
				expr(f.Key)
				expr(f.Value)
			}
		case *ast.AttrGetExpr:
			expr(ex.Object)
			expr(ex.Key)
		case *ast.ArithmeticOpExpr:
			expr(ex.Lhs)
			expr(ex.Rhs)
		case *ast.LogicalOpExpr:
			expr(ex.Lhs)
			expr(ex.Rhs)
		}
	}
	stmt = func(s ast.Stmt) {
		switch st := s.(type) {
		case *ast.AssignStmt:
			found = append(found, st)
			exprs(st.Lhs)
			exprs(st.Rhs)
		case *ast.LocalAssignStmt:
			exprs(st.Exprs)
		case *ast.FuncCallStmt:
			expr(st.Expr)
		case *ast.DoBlockStmt:
			block(st.Stmts)
		case *ast.WhileStmt:
			block(st.Stmts)
		case *ast.RepeatStmt:
			block(st.Stmts)
		case *ast.IfStmt:
			block(st.Then)
			block(st.Else)
		case *ast.NumberForStmt:
			block(st.Stmts)
		case *ast.GenericForStmt:
			block(st.Stmts)
		case *ast.FuncDefStmt:
			expr(st.Func)
		case *ast.ReturnStmt:
			exprs(st.Exprs)
		}
	}
	block(stmts)
	return found
}

func isTemp(e ast.Expr) bool {
	id, ok := e.(*ast.IdentExpr)
	return ok && strings.HasPrefix(id.Value, tempPrefix)
}

func TestRewrittenAssignmentsHaveOneTargetAndReadOnlyTemporaries(t *testing.T) {
	var src strings.Builder
	for _, tc := range assignCases {
		src.WriteString("do\n" + tc.src + "\nend\n")
	}
	chunk, err := Parse(strings.NewReader(src.String()), "=cases", StringLevels)
	if err != nil {
		t.Fatal(err)
	}
	multi := 0
	for _, st := range collectAssigns(chunk) {
		if len(st.Lhs) > 1 {
			multi++
		}
	}
	if multi < len(assignCases)-2 {
		t.Fatalf("only %d multiple assignments found before the rewrite", multi)
	}
	chunk, _ = rewriteChunk(chunk)
	split := 0
	for _, st := range collectAssigns(chunk) {
		if len(st.Lhs) != 1 {
			t.Errorf("line %d: assignment with %d targets survived", st.Line(), len(st.Lhs))
			continue
		}
		if !isTemp(st.Rhs[0]) {
			continue // a user's single assignment, left as written
		}
		split++
		// The store may read nothing but temporaries and constants, so it
		// cannot observe another target's new value.
		if a, ok := st.Lhs[0].(*ast.AttrGetExpr); ok {
			if !isTemp(a.Object) && !isConstant(a.Object) || !isTemp(a.Key) && !isConstant(a.Key) {
				t.Errorf("line %d: store reads a user variable in its target", st.Line())
			}
		}
	}
	if split < 2*multi {
		t.Errorf("%d stores from %d multiple assignments", split, multi)
	}
}

func TestRewriteKeepsLineNumbers(t *testing.T) {
	src := "local t, a = {}, 1\n\nt.x,\n  a = a,\n  2\n"
	chunk, err := Parse(strings.NewReader(src), "=lines", StringLevels)
	if err != nil {
		t.Fatal(err)
	}
	chunk, _ = rewriteChunk(chunk)
	block, ok := chunk[1].(*ast.DoBlockStmt)
	if !ok {
		t.Fatalf("statement 2 is %T, want *ast.DoBlockStmt", chunk[1])
	}
	if block.Line() != 3 {
		t.Errorf("block on line %d, want 3", block.Line())
	}
	local := block.Stmts[0].(*ast.LocalAssignStmt)
	if local.Line() != 3 {
		t.Errorf("temporaries declared on line %d, want 3", local.Line())
	}
	// Stores run right to left: a (line 4) first, then t.x (line 3).
	wantLines := []int{4, 3}
	for i, s := range block.Stmts[1:] {
		if s.Line() != wantLines[i] {
			t.Errorf("store %d on line %d, want %d", i+1, s.Line(), wantLines[i])
		}
	}
}

func TestTemporaryNamesCannotBeWrittenInLua(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	for _, src := range []string{
		"local " + tempName(1) + " = 1",
		tempName(1) + " = 1",
		"return " + tempName(1),
	} {
		if _, err := LoadString(L, src, "=<string>"); err == nil {
			t.Errorf("%q compiled; a user could name a temporary", src)
		}
	}
	for n := 1; n <= len(tempNames)+2; n++ {
		if got, want := tempName(n), formatTempName(n); got != want {
			t.Errorf("tempName(%d) = %q, want %q", n, got, want)
		}
	}
	if tempName(1) == tempName(2) {
		t.Error("temporaries of one statement share a name")
	}
}

// reverseLocals declares n locals holding 1..n and reverses them in one
// statement.
func reverseLocals(n int) string {
	names := make([]string, n)
	inits := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("v%d", i+1)
		inits[i] = fmt.Sprint(i + 1)
	}
	values := make([]string, n)
	for i := range values {
		values[i] = names[n-1-i]
	}
	return "local " + strings.Join(names, ", ") + " = " + strings.Join(inits, ", ") + "\n" +
		strings.Join(names, ", ") + " = " + strings.Join(values, ", ") + "\n" +
		"return v1, v" + fmt.Sprint(n) + "\n"
}

// Each target costs one temporary register on top of the user's locals, so a
// function's 200 registers allow 100 local targets (Lua 5.1 allows 125);
// beyond that the chunk fails to compile with an error, never a panic.
func TestHundredLocalTargetsCompileAndMoreIsACompileError(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	fn, err := LoadString(L, reverseLocals(100), "=<string>")
	if err != nil {
		t.Fatalf("100 targets: %v", err)
	}
	L.Push(fn)
	if err := L.PCall(0, 2, nil); err != nil {
		t.Fatal(err)
	}
	if first, last := L.Get(-2), L.Get(-1); first != lua.LNumber(100) || last != lua.LNumber(1) {
		t.Errorf("after reversing, v1, v100 = %v, %v; want 100, 1", first, last)
	}
	_, err = LoadString(L, reverseLocals(101), "=<string>")
	var apiErr *lua.ApiError
	if !errors.As(err, &apiErr) || apiErr.Type != lua.ApiErrorSyntax {
		t.Fatalf("101 targets: error %v, want a syntax *lua.ApiError", err)
	}
}
