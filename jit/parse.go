package jit

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// Error is a kernel the language does not allow, or a launch that fails,
// at a line of the script.
type Error struct {
	Chunk string
	Line  int
	Msg   string
}

func (e *Error) Error() string { return fmt.Sprintf("jit: %s:%d: %s", e.Chunk, e.Line, e.Msg) }

// Function is a Lua function accepted as a kernel (or a device function),
// before types.
type Function struct {
	Tree   *ast.FunctionExpr
	Chunk  string
	Params []string
	// Env reads the locals of the script it captures; Captured are their
	// names, in the order the body first reads them.
	Env      Env
	Captured []string
	Device   bool // a device function, which returns values
}

// Line is where the function starts.
func (f *Function) Line() int { return f.Tree.Line() }

// mathFuncs are the math functions a kernel may call, with how many
// arguments each takes (-2: two or more).
var mathFuncs = map[string]int{
	"abs": 1, "acos": 1, "asin": 1, "atan": 1, "atan2": 2, "ceil": 1,
	"cos": 1, "cosh": 1, "deg": 1, "exp": 1, "floor": 1, "fmod": 2,
	"frexp": 1, "ldexp": 2, "log": 1, "log10": 1, "max": -2, "min": -2,
	"modf": 1, "pow": 2, "rad": 1, "sin": 1, "sinh": 1, "sqrt": 1,
	"tan": 1, "tanh": 1,
}

// mathConsts are the math fields a kernel may read.
var mathConsts = map[string]bool{"pi": true, "huge": true}

// kernelFuncs are the kernels functions of the language, with how many
// arguments each takes.
var kernelFuncs = map[string]int{
	"grid": 1, "gridsize": 1, "syncthreads": 0, "shared": 2, "local_array": 2,
	"atomic_add": 3, "atomic_sub": 3, "atomic_max": 3, "atomic_min": 3, "atomic_exch": 3, "atomic_cas": 4,
	"syncwarp": 0, "shfl_down": 2, "shfl_xor": 2, "laneid": 0,
}

// isAtomic reports the kernels.atomic_* functions: statements, or the
// value of a local (the element's old value).
func isAtomic(name string) bool { return strings.HasPrefix(name, "atomic_") }

// statementOnly reports the kernels functions that have no value.
func statementOnly(name string) bool { return name == "syncthreads" || name == "syncwarp" }

// Parse accepts fn as a kernel if it uses only the kernel language, so
// that kernels.jit reports a construct outside it at once rather than at
// the first launch. Types are checked later, per signature, by Check.
func Parse(fn *ast.FunctionExpr, chunk string) (*Function, error) {
	return ParseIn(fn, chunk, Scope{})
}

// ParseIn is Parse for a function that may capture locals of its script
// (numbers and device functions), read through s.Env.
func ParseIn(fn *ast.FunctionExpr, chunk string, s Scope) (*Function, error) {
	return parseFunction(fn, chunk, s, false)
}

// ParseDevice accepts fn as a device function: a function a kernel calls,
// whose parameters are numbers and which returns numbers or booleans.
func ParseDevice(fn *ast.FunctionExpr, chunk string, env Env) (*Function, error) {
	f, err := parseFunction(fn, chunk, Scope{Env: env}, true)
	if e, ok := err.(*Error); ok {
		// the error's line is in the device function, which may be far
		// from the kernel that calls it
		return nil, &Error{Chunk: e.Chunk, Line: e.Line, Msg: e.Msg + " (in a device function, which a kernel calls)"}
	}
	return f, err
}

func parseFunction(fn *ast.FunctionExpr, chunk string, s Scope, device bool) (*Function, error) {
	f := &Function{Tree: fn, Chunk: chunk, Params: fn.ParList.Names, Env: s.Env, Device: device}
	p := &parser{chunk: chunk, env: s.Env, sharedMax: s.SharedPerBlock, device: device, fn: f}
	what := "a kernel"
	if device {
		what = "a device function"
	}
	err := p.catch(func() {
		if fn.ParList.HasVargs {
			p.fail(fn.Line(), "%s cannot take `...`; name each parameter", what)
		}
		p.push()
		for _, n := range fn.ParList.Names {
			p.declare(n)
		}
		p.block(fn.Stmts, 0)
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// parser walks a function, tracking which names are locals.
type parser struct {
	chunk  string
	scopes []map[string]bool
	mapFn  bool // a kernels.map function: scalars in, one value out
	device bool // a device function: returns values
	// env reads the script's locals the function captures; fn records
	// the names it reads; sharedMax is Scope.SharedPerBlock.
	env       Env
	fn        *Function
	sharedMax int
	// valueOf is the right side of `local x = e` or `x = e`, or the left
	// side of an if's comparison, being walked: where an atomic's old
	// value may go
	valueOf ast.Expr
}

// isCaptured reports whether name, not a local of the kernel, is a local
// of the script the function captures, and records it.
func (p *parser) isCaptured(name string, line int) bool {
	if p.env == nil || p.isLocal(name) || name == "math" || name == "kernels" {
		return false
	}
	c, ok := p.env.Upvalue(name)
	if !ok {
		return false
	}
	if c.Kind != "number" && c.Kind != "function" && c.Kind != "nil" {
		// a value it holds now that no kernel can use: said at
		// kernels.jit, not at the first launch
		p.fail(line, "%s", refusedCapture(name, c.Kind))
	}
	if p.fn != nil && !slices.Contains(p.fn.Captured, name) {
		p.fn.Captured = append(p.fn.Captured, name)
	}
	return true
}

// assigned notes the one value of a single assignment, where an atomic's
// value may appear (as it may on the left of an if's comparison, which
// Lua evaluates first): the atomic is then a statement of its own, and
// every expression stays free of side effects.
func (p *parser) assigned(names int, exprs []ast.Expr) {
	p.valueOf = nil
	if names == 1 && len(exprs) == 1 {
		p.valueOf = exprs[0]
	}
}

func (p *parser) fail(line int, format string, args ...any) {
	panic(&Error{Chunk: p.chunk, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// catch runs f and returns the first *Error it raised.
func (p *parser) catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	f()
	return nil
}

func (p *parser) push()               { p.scopes = append(p.scopes, map[string]bool{}) }
func (p *parser) pop()                { p.scopes = p.scopes[:len(p.scopes)-1] }
func (p *parser) declare(name string) { p.scopes[len(p.scopes)-1][name] = true }

func (p *parser) isLocal(name string) bool {
	for i := len(p.scopes) - 1; i >= 0; i-- {
		if p.scopes[i][name] {
			return true
		}
	}
	return false
}

// block walks a block in a scope of its own; loops counts the loops
// around it, for break.
func (p *parser) block(stmts []ast.Stmt, loops int) {
	p.push()
	for _, s := range stmts {
		p.stmt(s, loops)
	}
	p.pop()
}

func (p *parser) stmt(s ast.Stmt, loops int) {
	line := s.Line()
	switch st := s.(type) {
	case *ast.LocalAssignStmt:
		p.gridCounts(st.Exprs, len(st.Names))
		p.assigned(len(st.Names), st.Exprs)
		p.exprs(st.Exprs)
		for _, n := range st.Names {
			p.declare(n)
		}
	case *ast.AssignStmt:
		for _, l := range st.Lhs {
			p.target(l)
		}
		p.gridCounts(st.Rhs, len(st.Lhs))
		p.assigned(len(st.Lhs), st.Rhs)
		p.exprs(st.Rhs)
	case *ast.FuncCallStmt:
		p.call(st.Expr.(*ast.FuncCallExpr), true)
	case *ast.DoBlockStmt:
		p.block(st.Stmts, loops)
	case *ast.IfStmt:
		if c, ok := st.Condition.(*ast.RelationalOpExpr); ok {
			p.valueOf = c.Lhs // if kernels.atomic_cas(...) == 0 then
		}
		p.expr(st.Condition)
		p.block(st.Then, loops)
		p.block(st.Else, loops)
	case *ast.WhileStmt:
		p.expr(st.Condition)
		p.block(st.Stmts, loops+1)
	case *ast.NumberForStmt:
		p.exprs([]ast.Expr{st.Init, st.Limit, st.Step})
		p.push()
		p.declare(st.Name)
		p.block(st.Stmts, loops+1)
		p.pop()
	case *ast.BreakStmt:
		if loops == 0 {
			p.fail(line, "break outside a loop")
		}
	case *ast.ReturnStmt:
		if p.mapFn {
			p.fail(line, "a map function returns one value, once, as its last statement")
		}
		if len(st.Exprs) > 0 && !p.device {
			p.fail(line, "a kernel returns nothing; write its results into an array")
		}
		p.exprs(st.Exprs)
	default:
		p.fail(line, "%s is not allowed in a kernel", stmtName(s))
	}
}

// target checks the left side of an assignment: a local or an element.
func (p *parser) target(e ast.Expr) {
	switch ex := e.(type) {
	case *ast.IdentExpr:
		if !p.isLocal(ex.Value) {
			p.fail(ex.Line(), "assignment to the global %s is not allowed in a kernel; declare it with local", ex.Value)
		}
	case *ast.AttrGetExpr:
		if mod, _ := p.library(ex); mod != "" {
			p.fail(e.Line(), "cannot assign to %s", exprName(e))
		}
		p.expr(ex)
	default:
		p.fail(e.Line(), "cannot assign to %s", exprName(e))
	}
}

func (p *parser) exprs(es []ast.Expr) {
	for _, e := range es {
		if e != nil {
			p.expr(e)
		}
	}
}

func (p *parser) expr(e ast.Expr) {
	line := e.Line()
	switch ex := e.(type) {
	case *ast.NumberExpr, *ast.TrueExpr, *ast.FalseExpr:
	case *ast.IdentExpr:
		if !p.isLocal(ex.Value) && !p.isCaptured(ex.Value, ex.Line()) {
			p.global(ex)
		}
	case *ast.AttrGetExpr:
		p.numba(ex)
		p.attr(ex)
	case *ast.FuncCallExpr:
		p.call(ex, false)
	case *ast.ArithmeticOpExpr:
		p.exprs([]ast.Expr{ex.Lhs, ex.Rhs})
	case *ast.RelationalOpExpr:
		p.exprs([]ast.Expr{ex.Lhs, ex.Rhs})
	case *ast.LogicalOpExpr:
		p.exprs([]ast.Expr{ex.Lhs, ex.Rhs})
	case *ast.UnaryMinusOpExpr:
		p.expr(ex.Expr)
	case *ast.UnaryNotOpExpr:
		p.expr(ex.Expr)
	case *ast.UnaryLenOpExpr:
		p.expr(ex.Expr)
	default:
		p.fail(line, "%s is not allowed in a kernel", exprName(e))
	}
}

// global reports a free name: math and kernels only appear as the start
// of math.f and kernels.f, everything else is outside a kernel's reach.
func (p *parser) global(ex *ast.IdentExpr) {
	switch ex.Value {
	case "math", "kernels":
		p.fail(ex.Line(), "%s can only be used as %s.<name> in a kernel", ex.Value, ex.Value)
	}
	if p.env == nil {
		p.fail(ex.Line(), "the global or upvalue %s is not allowed in a kernel; pass it as a parameter", ex.Value)
	}
	p.fail(ex.Line(), "the global %s is not allowed in a kernel; pass it as a parameter, or capture a local of the script holding a number or a function", ex.Value)
}

// attr checks A[i], A.shape[k], math.pi and kernels.threadIdx.x.
func (p *parser) attr(ex *ast.AttrGetExpr) {
	if p.kernelsField(ex) {
		return
	}
	p.shapeIndex(ex)
	if id, ok := ex.Object.(*ast.IdentExpr); ok && !p.isLocal(id.Value) && id.Value == "math" {
		if k, ok := ex.Key.(*ast.StringExpr); ok && mathConsts[k.Value] {
			return
		}
		p.fail(ex.Line(), "math.%s is not allowed in a kernel (math.pi and math.huge are)", keyText(ex.Key))
	}
	if id, ok := ex.Object.(*ast.IdentExpr); ok && !p.isLocal(id.Value) && id.Value == "kernels" && keyText(ex.Key) == "warpsize" {
		return
	}
	if k, ok := ex.Key.(*ast.StringExpr); ok {
		if k.Value != "shape" {
			p.fail(ex.Line(), "the field .%s is not allowed in a kernel (only A.shape[k])", k.Value)
		}
		p.expr(ex.Object)
		return
	}
	p.expr(ex.Object)
	p.expr(ex.Key)
}

// call checks math.f(...) and kernels.f(...); asStmt is set for a call
// standing as a statement.
func (p *parser) call(ex *ast.FuncCallExpr, asStmt bool) {
	line := ex.Line()
	if ex.Func == nil {
		p.fail(line, "the method call :%s() is not allowed in a kernel", ex.Method)
	}
	p.numba(ex.Func)
	if id, ok := ex.Func.(*ast.IdentExpr); ok && p.isCaptured(id.Value, id.Line()) {
		p.deviceCall(ex, id, asStmt)
		return
	}
	mod, name := p.library(ex.Func)
	if mod == "" {
		p.fail(line, "a call of %s is not allowed in a kernel (only math and kernels functions)", exprName(ex.Func))
	}
	want, ok := kernelFuncs[name]
	if mod == "math" {
		want, ok = mathFuncs[name]
	}
	if !ok {
		p.fail(line, "%s.%s is not allowed in a kernel", mod, name)
	}
	if p.mapFn && mod == "kernels" {
		p.fail(line, "kernels.%s is not allowed in a map function; it computes one element from its arguments' elements", name)
	}
	if want >= 0 && len(ex.Args) != want || want == -2 && len(ex.Args) < 2 {
		p.fail(line, "%s.%s takes %s", mod, name, argCount(want))
	}
	if asStmt && !(mod == "kernels" && (statementOnly(name) || isAtomic(name))) {
		p.fail(line, "the value of %s.%s is not used", mod, name)
	}
	if !asStmt && mod == "kernels" && statementOnly(name) {
		p.fail(line, "kernels.%s is a statement in a kernel; it has no value", name)
	}
	if !asStmt && mod == "kernels" && isAtomic(name) && ex != p.valueOf {
		p.fail(line, "kernels.%s's old value can only be assigned, alone, to a local or an element (local old = kernels.%s(...)) or be the left side of an if's comparison (if kernels.%s(...) == v then), or the call be a statement", name, name, name)
	}
	if mod == "kernels" && (name == "shared" || name == "local_array") {
		if p.device {
			p.fail(line, "kernels.%s is not allowed in a device function; declare the array in the kernel", name)
		}
		p.arrayArgs(ex, name)
		return
	}
	if mod == "kernels" && (name == "grid" || name == "gridsize") {
		if _, err := dimsArg(ex.Args[0]); err != nil {
			p.fail(line, "kernels.%s %v", name, err)
		}
	}
	p.exprs(ex.Args)
}

// library splits math.f or kernels.f; "" if e is neither.
func (p *parser) library(e ast.Expr) (mod, name string) {
	a, ok := e.(*ast.AttrGetExpr)
	if !ok {
		return "", ""
	}
	id, ok := a.Object.(*ast.IdentExpr)
	k, isString := a.Key.(*ast.StringExpr)
	if !ok || !isString || p.isLocal(id.Value) || id.Value != "math" && id.Value != "kernels" {
		return "", ""
	}
	return id.Value, k.Value
}

func argCount(n int) string {
	switch n {
	case -2:
		return "two or more arguments"
	case 1:
		return "one argument"
	}
	return fmt.Sprintf("%d arguments", n)
}

func keyText(e ast.Expr) string {
	if k, ok := e.(*ast.StringExpr); ok {
		return k.Value
	}
	return "?"
}

func stmtName(s ast.Stmt) string {
	switch s.(type) {
	case *ast.FuncDefStmt:
		return "a function definition"
	case *ast.GenericForStmt:
		return "a generic for (for ... in)"
	case *ast.RepeatStmt:
		return "repeat ... until"
	}
	return "this statement"
}

func exprName(e ast.Expr) string {
	switch ex := e.(type) {
	case *ast.TableExpr:
		return "a table constructor"
	case *ast.FunctionExpr:
		return "a closure (function literal)"
	case *ast.StringExpr:
		return "a string"
	case *ast.StringConcatOpExpr:
		return "string concatenation (..)"
	case *ast.NilExpr:
		return "nil"
	case *ast.Comma3Expr:
		return "..."
	case *ast.IdentExpr:
		return ex.Value
	case *ast.AttrGetExpr:
		return exprName(ex.Object) + "." + keyText(ex.Key)
	case *ast.FuncCallExpr:
		return "a function call"
	case *ast.NumberExpr:
		return "the number " + ex.Value
	case *ast.TrueExpr:
		return "true"
	case *ast.FalseExpr:
		return "false"
	case *ast.ArithmeticOpExpr:
		return "the result of " + ex.Operator
	case *ast.RelationalOpExpr:
		return "a comparison (" + ex.Operator + ")"
	case *ast.LogicalOpExpr:
		return "an '" + ex.Operator + "' expression"
	case *ast.UnaryMinusOpExpr:
		return "the result of unary -"
	case *ast.UnaryNotOpExpr:
		return "a 'not' expression"
	case *ast.UnaryLenOpExpr:
		return "the result of #"
	}
	return "this expression"
}

// KernelFunctions are the names of the kernels module's functions that
// only a kernel can call (kernels.grid, kernels.syncthreads...).
func KernelFunctions() []string {
	names := make([]string, 0, len(kernelFuncs))
	for n := range kernelFuncs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// luaText writes e back as Lua source, for messages that quote an
// operation; parentheses only where Lua's precedence needs them.
func luaText(e ast.Expr) string {
	text, _ := luaTextPrec(e)
	return text
}

// Lua's binary operator precedences, lowest first; unary operators bind
// tighter than all but ^.
var luaPrec = map[string]int{
	"or": 1, "and": 2,
	"<": 3, ">": 3, "<=": 3, ">=": 3, "~=": 3, "==": 3,
	"..": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6, "^": 8,
}

const unaryPrec, atomPrec = 7, 9

// luaTextPrec is e's text and the precedence of its outermost operator.
func luaTextPrec(e ast.Expr) (string, int) {
	binary := func(op string, l, r ast.Expr) (string, int) {
		p := luaPrec[op]
		lt, lp := luaTextPrec(l)
		rt, rp := luaTextPrec(r)
		// ^ is right associative, the others left
		if lp < p || op == "^" && lp == p {
			lt = "(" + lt + ")"
		}
		if rp < p || op != "^" && rp == p {
			rt = "(" + rt + ")"
		}
		return lt + " " + op + " " + rt, p
	}
	unary := func(op string, x ast.Expr) (string, int) {
		xt, xp := luaTextPrec(x)
		if xp < unaryPrec {
			xt = "(" + xt + ")"
		}
		return op + xt, unaryPrec
	}
	switch ex := e.(type) {
	case *ast.NumberExpr:
		return ex.Value, atomPrec
	case *ast.IdentExpr:
		return ex.Value, atomPrec
	case *ast.TrueExpr:
		return "true", atomPrec
	case *ast.FalseExpr:
		return "false", atomPrec
	case *ast.StringExpr:
		return strconv.Quote(ex.Value), atomPrec
	case *ast.ArithmeticOpExpr:
		return binary(ex.Operator, ex.Lhs, ex.Rhs)
	case *ast.RelationalOpExpr:
		return binary(ex.Operator, ex.Lhs, ex.Rhs)
	case *ast.LogicalOpExpr:
		return binary(ex.Operator, ex.Lhs, ex.Rhs)
	case *ast.UnaryMinusOpExpr:
		return unary("-", ex.Expr)
	case *ast.UnaryNotOpExpr:
		return unary("not ", ex.Expr)
	case *ast.UnaryLenOpExpr:
		return unary("#", ex.Expr)
	case *ast.AttrGetExpr:
		obj, p := luaTextPrec(ex.Object)
		if p < atomPrec {
			obj = "(" + obj + ")"
		}
		if k, ok := ex.Key.(*ast.StringExpr); ok {
			return obj + "." + k.Value, atomPrec
		}
		return obj + "[" + luaText(ex.Key) + "]", atomPrec
	case *ast.FuncCallExpr:
		args := make([]string, len(ex.Args))
		for i, a := range ex.Args {
			args[i] = luaText(a)
		}
		fn := "?"
		if ex.Func != nil {
			fn = luaText(ex.Func)
		}
		return fn + "(" + strings.Join(args, ", ") + ")", atomPrec
	}
	return exprName(e), atomPrec
}
