package luac

import (
	"strconv"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// Table constructors, the second correction.
//
// gopher-lua v1.1.2 compiles a constructor's list items in batches of 50
// (OP_SETLIST). Past 511 batches, 25,550 items, the batch number no longer
// fits in the instruction and is meant to follow it as a word of its own;
// the compiler writes 0 there instead (compile.go overwrites the number
// before emitting it; upstream pull request yuin/gopher-lua#537, open). The
// rest of the list lands at negative indices and the table silently ends at
// item 25,550, and a constructor nested in it loses its place in the parent.
//
// The compiler also finds each constant (every number and string literal)
// by scanning the function's constants one by one (funcContext.ConstIndex),
// so a function with n distinct literals compiles in time proportional to
// n²: 20,000 numbers take a second and a half, Lua 5.1's verybig.lua more
// than a minute.
//
// Both are mended here, on the syntax tree, and both by giving literals a
// function of their own, since constants belong to a function:
//
//   - a constructor with more than splitFields fields or splitLiterals
//     literals becomes a call of a builder function that fills a new table
//     chunk by chunk, each chunk a function with at most chunkFields fields
//     and, field size permitting, chunkLiterals literals (split);
//   - a function still left with more than functionLiterals literals has
//     each of its constructors holding at least hoistLiterals of them
//     wrapped, whole, in a function that returns it (hoist), and if that is
//     not enough, runs of its statements moved into functions (group).
//
// What a program sees is unchanged: fields are evaluated once each, in
// order, with their keys before their values; list items take the indices
// 1, 2, ... in order and a last item that is a call or `...` adds all its
// values; `...` reaches the chunks that use it. A table under construction
// cannot be seen by the program, so when each value is stored makes no
// difference. The one difference is a traceback raised inside such a
// constructor, or in moved statements, which shows the functions made
// here. error's levels and debug.getinfo's do not count them
// (internal/lua51 recognises them by frameName or tableName, a first
// parameter no source can write), so a position names the user's line
// and caller.
//
// Once gopher-lua emits the extended batch number and indexes its
// constants, this file and the calls to split and hoist can go.

// The limits are variables so that tests can split small constructors.
// Compiling n literals in one function costs about 4n² ns, so a chunk's 128
// cost 0.07 ms and a function's 4096 up to 70 ms.
var (
	splitFields   = 4096
	splitLiterals = 1024
	chunkFields   = 512
	chunkLiterals = 128

	functionLiterals = 4096
	hoistLiterals    = 2
)

// The builder's names contain parentheses, so no Lua source can name them,
// as with the assignment temporaries.
const (
	tableName = "(table)"
	indexName = "(index)"
	stepName  = "(step)"
	restName  = "(rest)"
)

// table decides what stands in place of a constructor, once its fields have
// been rewritten; literals is how many of the function's literals it holds.
func (r *rewriter) table(tb *ast.TableExpr, literals int) ast.Expr {
	wrong := len(tb.Fields) > 511*lua.FieldsPerFlush || keyAfterFullBatch(tb.Fields)
	if !wrong && len(tb.Fields) <= splitFields && literals <= splitLiterals {
		return tb
	}
	if m := measure(tb); m.varargs && m.arg {
		if wrong && r.err == nil {
			// Rare enough to refuse rather than mend; see movable.
			r.err = &rewriteError{line: tb.Line(), msg: "table constructor too large to use both ... and arg"}
		}
		return tb
	}
	r.literals -= literals
	return split(tb)
}

// hoist walks a function's body again, after its rewrite, and wraps its
// constructors so that their literals become constants of their own
// functions; it leaves r.literals counting those that remain.
func (r *rewriter) hoist(stmts []ast.Stmt) {
	r.mode, r.literals = hoistTables, 0
	r.block(stmts)
	r.mode = rewriteAll
}

// hoistTable wraps a constructor whole, outermost first, so that a table of
// rows costs one function and not one per row.
func (r *rewriter) hoistTable(tb *ast.TableExpr) ast.Expr {
	m := measure(tb)
	if m.literals < hoistLiterals || !m.movable() {
		r.literals += m.literals
		return tb
	}
	body := []ast.Stmt{at(&ast.ReturnStmt{Exprs: []ast.Expr{tb}}, tb)}
	return hiddenCall(body, m.varargs, tb)
}

// measure walks nodes without changing them. It counts the literals that
// belong to the function they sit in (those of nested function literals do
// not) and notes what decides whether they may move into a function of
// their own.
func measure(nodes ...ast.PositionHolder) *rewriter {
	m := &rewriter{mode: countOnly}
	for _, n := range nodes {
		switch n := n.(type) {
		case ast.Expr:
			m.expr(n)
		case ast.Stmt:
			m.stmt(n)
		}
	}
	return m
}

// movable reports whether measured code keeps its meaning inside a new
// function. It must not return or jump out, nor name a function that
// finds its target by stack level: setfenv(1, t) or module("m") would
// reach the new function instead of the one written. And a function
// declaring `...` gets a local named arg (Lua 5.0's table of the
// arguments, nil once `...` is used), which would hide another arg, such
// as the script's arguments in the main chunk, from code that uses both.
func (m *rewriter) movable() bool {
	return !m.escapes && !m.stack && !(m.varargs && m.arg)
}

// stackLevelNames are the globals whose functions act on a caller chosen by
// stack level.
var stackLevelNames = map[string]bool{"setfenv": true, "getfenv": true, "module": true, "debug": true}

// split builds
//
//	(function(...)
//	  local (table), (index) = {}, 0
//	  (index) = (function((table), (index), ...) <chunk 1>; return (index) end)((table), (index), ...)
//	  ...
//	  return (table)
//	end)(...)
//
// where a chunk stores its fields as fill shows. `...` appears only in the functions that need it: a function that
// declares `...` without using it gets Lua 5.0's `arg` table, which would
// hide a variable of that name.
func split(tb *ast.TableExpr) ast.Expr {
	table, index := identAt(tableName, tb), identAt(indexName, tb)
	stmts := []ast.Stmt{at(&ast.LocalAssignStmt{
		Names: []string{tableName, indexName},
		Exprs: []ast.Expr{at(&ast.TableExpr{}, tb), number("0", tb)},
	}, tb)}
	anyVarargs := false
	for start := 0; start < len(tb.Fields); {
		end, varargs := chunkEnd(tb.Fields, start)
		anyVarargs = anyVarargs || varargs
		body := fill(tb.Fields[start:end], end == len(tb.Fields))
		body = append(body, at(&ast.ReturnStmt{Exprs: []ast.Expr{index}}, tb))
		first := tb.Fields[start].Value
		chunk := function([]string{tableName, indexName}, varargs, body, first)
		stmts = append(stmts, assign(index, call(chunk, []ast.Expr{table, index}, varargs, first), first))
		start = end
	}
	stmts = append(stmts, at(&ast.ReturnStmt{Exprs: []ast.Expr{table}}, tb))
	return hiddenCall(stmts, anyVarargs, tb)
}

// keyAfterFullBatch reports a keyed field that follows a multiple of 50
// list items. gopher-lua stores the batch after the 50th item and then,
// testing the batch count after every field, stores it again after the
// keyed field, from registers the keyed field has overwritten:
// {1, ..., 50, [f()] = v} gets f's result at index 1, or crashes the VM.
func keyAfterFullBatch(fields []*ast.Field) bool {
	items := 0
	for _, f := range fields {
		if f.Key == nil {
			items++
		} else if items > 0 && items%lua.FieldsPerFlush == 0 {
			return true
		}
	}
	return false
}

// chunkEnd is where the chunk that starts at fields[start] ends, and whether
// any of its fields uses `...`. A chunk ends where no list item waits to be
// stored, so that each batch is stored within one chunk, and takes at least
// one field; a batch whose keyed fields alone pass the limits makes one
// chunk however large it grows.
func chunkEnd(fields []*ast.Field, start int) (end int, varargs bool) {
	literals, items := 0, 0
	cut, cutVarargs := 0, false // the last place the chunk may end
	for end = start; end < len(fields); end++ {
		m := measure(fields[end].Key, fields[end].Value)
		if cut > start && (end-start >= chunkFields || literals+m.literals > chunkLiterals) {
			return cut, cutVarargs
		}
		literals += m.literals
		varargs = varargs || m.varargs
		if fields[end].Key == nil {
			items++
		}
		if items%lua.FieldsPerFlush == 0 {
			cut, cutVarargs = end+1, varargs
		}
	}
	return end, varargs
}

// fill is the statements that store a chunk's fields into (table); last
// says whether they end the constructor. They store as Lua 5.1 does, which
// matters when a key repeats an item's index ({"a", [1] = "b"} is {"a"}):
// a keyed field at once, list items in batches of 50, each batch after the
// fields among its items and at the end. Each run of items stays a
// constructor of its own, so the user's field nodes are reused and an item
// costs no new node:
//
//	do
//	  local (items 1) = {<items>}
//	  (table)[<key>] = <value>
//	  local (items 2) = {<items>}
//	  for (step) = 1, <count 1> do (table)[(index) + (step)] = (items 1)[(step)] end
//	  (index) = (index) + <count 1>
//	  for (step) = 1, <count 2> do ... end
//	  (index) = (index) + <count 2>
//	end
func fill(fields []*ast.Field, last bool) []ast.Stmt {
	var stmts, batch []ast.Stmt
	var runs []itemRun
	open := -1 // where the run being read began
	closeRun := func(end int) {
		if open < 0 {
			return
		}
		r := itemRun{name: runName(len(runs) + 1), items: fields[open:end]}
		if last && end == len(fields) && multiValued(fields[end-1].Value) {
			r.items, r.spread = r.items[:len(r.items)-1], fields[end-1].Value
		}
		if len(r.items) > 0 {
			pos := r.items[0].Value
			batch = append(batch, local(r.name, at(&ast.TableExpr{Fields: r.items}, pos), pos))
		}
		if r.spread != nil {
			batch = append(batch, local(restName, collect(r.spread), r.spread))
		}
		runs = append(runs, r)
		open = -1
	}
	flush := func(end int) {
		closeRun(end)
		for _, r := range runs {
			batch = append(batch, r.copy()...)
		}
		if len(batch) > 0 {
			stmts = append(stmts, at(&ast.DoBlockStmt{Stmts: batch}, batch[0]))
		}
		batch, runs = nil, nil
	}
	items := 0
	for i, f := range fields {
		if f.Key != nil {
			closeRun(i)
			batch = append(batch, assign(at(&ast.AttrGetExpr{Object: identAt(tableName, f.Key), Key: f.Key}, f.Key), f.Value, f.Key))
			continue
		}
		if open < 0 {
			open = i
		}
		if items++; items%lua.FieldsPerFlush == 0 {
			flush(i + 1)
		}
	}
	flush(len(fields))
	return stmts
}

// itemRun is a run of list items with no keyed field among them, held in
// the local name until its batch is stored. spread is the call or `...`
// that ends the constructor, if the run ends it, held in (rest).
type itemRun struct {
	name   string
	items  []*ast.Field
	spread ast.Expr
}

// collect is (function(...) return arg end)(<value>): Lua 5.0's arg table
// of all the value's values, with their number as arg.n. A constructor
// stores every value, trailing nils too, and a nil stored over a keyed
// field's value removes it ({[3] = "k", f()} where f returns 1, 2, nil), so
// the count must be exact, and # stops at the last non-nil. arg is the one
// way to the count that a script cannot redefine, as it could select.
func collect(value ast.Expr) ast.Expr {
	fn := function(nil, true, []ast.Stmt{at(&ast.ReturnStmt{Exprs: []ast.Expr{identAt("arg", value)}}, value)}, value)
	return at(&ast.FuncCallExpr{Func: fn, Args: []ast.Expr{value}, AdjustRet: true}, value)
}

func local(name string, value ast.Expr, pos ast.PositionHolder) ast.Stmt {
	return at(&ast.LocalAssignStmt{Names: []string{name}, Exprs: []ast.Expr{value}}, pos)
}

func runName(n int) string { return "(items " + strconv.Itoa(n) + ")" }

// copy stores the run after (index) and advances (index) past it:
//
//	for (step) = 1, <count> do (table)[(index) + (step)] = <run>[(step)] end
//	(index) = (index) + <count>
//
// The count is the number of items, nils included, as a constructor stores
// them; a spread run then stores (rest) the same way, its count (rest).n.
func (r itemRun) copy() []ast.Stmt {
	var stmts []ast.Stmt
	if len(r.items) > 0 {
		pos := r.items[0].Value
		count := number(strconv.Itoa(len(r.items)), pos)
		index := identAt(indexName, pos)
		stmts = append(stmts, copyLoop(r.name, count, pos),
			assign(index, at(&ast.ArithmeticOpExpr{Operator: "+", Lhs: index, Rhs: count}, pos), pos))
	}
	if r.spread != nil {
		pos := r.spread
		count := at(&ast.AttrGetExpr{Object: identAt(restName, pos), Key: at(&ast.StringExpr{Value: "n"}, pos)}, pos)
		stmts = append(stmts, copyLoop(restName, count, pos))
	}
	return stmts
}

func copyLoop(from string, count ast.Expr, pos ast.PositionHolder) ast.Stmt {
	step := identAt(stepName, pos)
	target := at(&ast.AttrGetExpr{
		Object: identAt(tableName, pos),
		Key:    at(&ast.ArithmeticOpExpr{Operator: "+", Lhs: identAt(indexName, pos), Rhs: step}, pos),
	}, pos)
	return at(&ast.NumberForStmt{
		Name:  stepName,
		Init:  number("1", pos),
		Limit: count,
		Step:  number("1", pos),
		Stmts: []ast.Stmt{assign(target, at(&ast.AttrGetExpr{Object: identAt(from, pos), Key: step}, pos), pos)},
	}, pos)
}

// multiValued reports the expressions that give all their values when they
// end a list: a call or `...` not wrapped in parentheses.
func multiValued(e ast.Expr) bool {
	switch ex := e.(type) {
	case *ast.FuncCallExpr:
		return !ex.AdjustRet
	case *ast.Comma3Expr:
		return !ex.AdjustRet
	}
	return false
}

func function(params []string, varargs bool, body []ast.Stmt, pos ast.PositionHolder) *ast.FunctionExpr {
	return at(&ast.FunctionExpr{ParList: &ast.ParList{HasVargs: varargs, Names: params}, Stmts: body}, pos)
}

// call calls fn with args and, if varargs, `...`. The parentheses Lua would
// need (AdjustRet) keep it one value and keep `return {...}` from becoming
// a tail call.
func call(fn *ast.FunctionExpr, args []ast.Expr, varargs bool, pos ast.PositionHolder) *ast.FuncCallExpr {
	if varargs {
		args = append(args, at(&ast.Comma3Expr{}, pos))
	}
	return at(&ast.FuncCallExpr{Func: fn, Args: args, AdjustRet: true}, pos)
}

// frameName is the first parameter of the functions that hold a user's
// statements or fields only to keep literals apart. A parameter name that
// begins with "(" is one no source can write, so internal/lua51 counts a
// frame whose function has one as no level of its own: error("e", 2)
// and debug.getinfo(2) reach the function the user wrote, as in Lua 5.1.
// The split chunks' first parameter, (table), marks them the same way.
const frameName = "(frame)"

// hiddenCall is (function((frame), ...) <body> end)(nil, ...), the nil
// filling (frame) so that `...` reaches the body whole.
func hiddenCall(body []ast.Stmt, varargs bool, pos ast.PositionHolder) *ast.FuncCallExpr {
	fn := function([]string{frameName}, varargs, body, pos)
	return call(fn, []ast.Expr{at(&ast.NilExpr{}, pos)}, varargs, pos)
}

func assign(target, value ast.Expr, pos ast.PositionHolder) *ast.AssignStmt {
	return at(&ast.AssignStmt{Lhs: []ast.Expr{target}, Rhs: []ast.Expr{value}}, pos)
}

func number(value string, pos ast.PositionHolder) *ast.NumberExpr {
	return at(&ast.NumberExpr{Value: value}, pos)
}

// at gives a new node the position of the user's code it stands for, so
// that error messages and tracebacks keep pointing there.
func at[N ast.PositionHolder](n N, pos ast.PositionHolder) N {
	copyPos(n, pos)
	return n
}

// groupNames bounds the names one group of statements may use, so that a
// group never needs more upvalues than gopher-lua can number (511; it does
// not check) nor many more than Lua 5.1 allows (60).
const groupNames = 60

// group moves runs of statements into functions of their own, each called
// where the run stood: (function(...) <statements> end)(...). It is the
// last resort for a function whose statements themselves hold thousands of
// literals (data[1] = 0.5 ... data[20000] = 7.25). Statements that declare
// locals stay, and so does anything movable refuses.
func group(stmts []ast.Stmt) []ast.Stmt {
	var out, run []ast.Stmt
	literals, varargs, names := 0, false, map[string]bool{}
	end := func() {
		if literals == 0 {
			out = append(out, run...)
		} else if len(run) > 0 {
			out = append(out, at(&ast.FuncCallStmt{Expr: hiddenCall(run, varargs, run[0])}, run[0]))
		}
		run, literals, varargs, names = nil, 0, false, map[string]bool{}
	}
	for _, s := range stmts {
		m := &rewriter{mode: countOnly, names: map[string]bool{}}
		m.stmt(s)
		if _, ok := s.(*ast.LocalAssignStmt); ok { // local x, local function f
			m.escapes = true
		}
		if !m.movable() {
			end()
			out = append(out, s)
			continue
		}
		union := len(names)
		for n := range m.names {
			if !names[n] {
				union++
			}
		}
		if len(run) > 0 && (literals+m.literals > chunkLiterals || len(run) >= chunkFields || union > groupNames) {
			end()
		}
		run = append(run, s)
		literals += m.literals
		varargs = varargs || m.varargs
		for n := range m.names {
			names[n] = true
		}
	}
	end()
	return out
}
