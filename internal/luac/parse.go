package luac

import (
	"fmt"
	"io"

	"github.com/yuin/gopher-lua/ast"
)

// Lua 5.1's parse-time limits (luaconf.h, llimits.h), with maxVars and
// maxUpvalues in codegen.go.
const (
	maxLevels = 200 // LUAI_MAXCCALLS: nested blocks and expressions
)

// Levels in use when a chunk is parsed: Lua 5.1 counts syntax levels in
// the same counter as nested C calls, and when lua.c loads a script one
// call (pmain) is active, when the script calls loadstring or load, two.
// So a script file may nest one level deeper than a string it loads.
const (
	FileLevels   = 1
	StringLevels = 2
)

// Parse reads a Lua 5.1 chunk and returns its syntax tree, the tree
// gopher-lua's parser builds for the same source (positions included),
// except where gopher-lua reads a valid source differently from lua5.1.
// name is the chunk's name as Lua 5.1 takes it ("@file", "=stdin", or a
// string's own source) and levels the syntax levels already in use
// (FileLevels or StringLevels). An error is a *SyntaxError worded as
// lua5.1 words it: `[string "x = = 1"]:1: unexpected symbol near '='`.
//
// Numbers are NumberExpr values that strconv.ParseInt(v, 0, 64) or else
// strconv.ParseFloat(v, 64) reads as lua5.1's value: the numeral as
// written where that holds, else a canonical form ("10" for "0010", whose
// text gopher-lua's compiler would read as octal; "+Inf" for "1e999").
func Parse(r io.Reader, name string, levels int) ([]ast.Stmt, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return ParseBytes(src, name, levels)
}

// ParseBytes is Parse on a source in memory.
func ParseBytes(src []byte, name string, levels int) ([]ast.Stmt, error) {
	chunk, _, err := parseChunk(src, name, levels, nil)
	return chunk, err
}

// parsed is what the compiler needs to know of a chunk beside its tree.
type parsed struct {
	// localFunctions are the `local function` statements. gopher-lua's
	// tree is the same for `local function f` and `local f = function`,
	// which differ in whether the body sees the new f.
	localFunctions map[*ast.LocalAssignStmt]bool
	// bodyEnds holds, for a loop or an if (and each elseif), the line of
	// the last token before its end, else or elseif: Lua 5.1's parser is
	// there when it codes the jump that closes the block, which a line
	// hook reports on that line.
	bodyEnds map[ast.Stmt]int
	// fieldEnds holds, for an item of a table constructor followed by ','
	// or ';', the line of that separator: Lua 5.1 stores the item once it
	// has read it.
	fieldEnds map[*ast.Field]int
	// closeLines holds the line of a table constructor's '}', where Lua
	// 5.1 stores its last items (the tree keeps gopher-lua's lines).
	closeLines map[*ast.TableExpr]int
}

// parseChunk is ParseBytes that also returns what parsed holds.
func parseChunk(src []byte, name string, levels int, stop func() error) (chunk []ast.Stmt, facts *parsed, err error) {
	return parseMarked(src, name, levels, stop, nil)
}

// parseMarked is parseChunk that records in m, when it is not nil, the
// tokens around each expression (near.go).
func parseMarked(src []byte, name string, levels int, stop func() error, m marks) (chunk []ast.Stmt, facts *parsed, err error) {
	p := &parser{lex: lexer{src: src, line: 1, chunk: chunkID(name, syntaxSize)}, level: levels, stop: stop, marks: m}
	p.lastline = 1
	p.parsed = parsed{localFunctions: map[*ast.LocalAssignStmt]bool{}, bodyEnds: map[ast.Stmt]int{},
		fieldEnds: map[*ast.Field]int{}, closeLines: map[*ast.TableExpr]int{}}
	defer func() {
		if r := recover(); r != nil {
			if s, ok := r.(stopped); ok {
				chunk, facts, err = nil, nil, s.err
				return
			}
			se, ok := r.(*syntaxErr)
			if !ok {
				panic(r)
			}
			chunk, facts, err = nil, nil, &SyntaxError{Message: se.msg}
		}
	}()
	p.openFunc(0)
	p.fs.vararg = true // the main function is always vararg
	p.next()
	chunk = p.chunk()
	p.check(tkEOS)
	p.markAfter(endOfChunk{})
	return chunk, &p.parsed, nil
}

// SyntaxError is a chunk lua5.1 would not load; Message is lua5.1's full
// message.
type SyntaxError struct{ Message string }

func (e *SyntaxError) Error() string { return e.Message }

// funcState is what the parser knows of a function being read: its
// active locals by name (to resolve upvalues and count locals), its
// upvalues and its blocks.
type parseFunc struct {
	prev        *parseFunc
	linedefined int
	vararg      bool
	actvar      []string
	pending     []string // locals declared, not yet active
	upvals      []parseUpval
	blocks      []block
}

type parseUpval struct {
	local bool // a local of the enclosing function, else one of its upvalues
	index int
}

type block struct {
	nactvar   int
	breakable bool
}

type parser struct {
	lex      lexer
	tok      token
	ahead    token
	hasAhead bool
	lastline int
	level    int
	fs       *parseFunc
	// parsed is what the parser learns for the compiler as it reads.
	parsed
	// marks, when not nil, records the tokens around each expression.
	marks marks
	// stop, when set, is asked every stopEvery tokens whether to give
	// up: a huge source must not keep a script past its deadline.
	stop   func() error
	tokens int
}

// stopEvery is how many tokens pass between two calls of parser.stop:
// about a tenth of a millisecond of reading.
const stopEvery = 1 << 12

// stopped carries stop's error out of the parser.
type stopped struct{ err error }

// next is luaX_next.
func (p *parser) next() {
	p.lastline = p.lex.line
	if p.tokens++; p.stop != nil && p.tokens%stopEvery == 0 {
		if err := p.stop(); err != nil {
			panic(stopped{err})
		}
	}
	if p.hasAhead {
		p.tok, p.hasAhead = p.ahead, false
		return
	}
	p.lex.next(&p.tok)
}

func (p *parser) lookahead() {
	p.lex.next(&p.ahead)
	p.hasAhead = true
}

// syntaxError is luaX_syntaxerror: msg near the current token.
func (p *parser) syntaxError(msg string) {
	if p.tok.t == 0 { // a zero byte: C takes token 0 as none
		p.lex.errorAt(msg, "", false)
	}
	p.lex.errorAt(msg, p.tok.text(), true)
}

func (p *parser) errorExpected(t int) {
	p.syntaxError("'" + token2str(t) + "' expected")
}

// errorLimit is errorlimit: fs has more than limit of what.
func (p *parser) errorLimit(fs *parseFunc, limit int, what string) {
	var msg string
	if fs.linedefined == 0 {
		msg = fmt.Sprintf("main function has more than %d %s", limit, what)
	} else {
		msg = fmt.Sprintf("function at line %d has more than %d %s", fs.linedefined, limit, what)
	}
	p.lex.errorAt(msg, "", false)
}

func (p *parser) testNext(t int) bool {
	if p.tok.t == t {
		p.next()
		return true
	}
	return false
}

func (p *parser) check(t int) {
	if p.tok.t != t {
		p.errorExpected(t)
	}
}

func (p *parser) checkNext(t int) {
	p.check(t)
	p.next()
}

// checkMatch closes what (opened by who at line where).
func (p *parser) checkMatch(what, who, where int) {
	if p.testNext(what) {
		return
	}
	if where == p.lex.line {
		p.errorExpected(what)
	}
	p.syntaxError(fmt.Sprintf("'%s' expected (to close '%s' at line %d)", token2str(what), token2str(who), where))
}

// checkName reads a name and returns it with the line it is on.
func (p *parser) checkName() (string, int) {
	p.check(tkName)
	s, line := p.tok.str, p.tok.line
	p.next()
	return s, line
}

func (p *parser) enterLevel() {
	p.level++
	if p.level > maxLevels {
		p.lex.errorAt("chunk has too many syntax levels", "", false)
	}
}

func (p *parser) leaveLevel() { p.level-- }

// Scopes.

func (p *parser) openFunc(line int) {
	p.fs = &parseFunc{prev: p.fs, linedefined: line}
}

func (p *parser) closeFunc() { p.fs = p.fs.prev }

// newLocal declares the n-th of the locals a statement is declaring
// (active once adjustLocals runs), as new_localvar does.
func (p *parser) newLocal(name string, n int) {
	fs := p.fs
	if len(fs.actvar)+n+1 > maxVars {
		p.errorLimit(fs, maxVars, "local variables")
	}
	fs.pending = append(fs.pending[:n], name)
}

func (p *parser) adjustLocals(n int) {
	fs := p.fs
	fs.actvar = append(fs.actvar, fs.pending[:n]...)
	fs.pending = fs.pending[:0]
}

func (p *parser) enterBlock(breakable bool) {
	p.fs.blocks = append(p.fs.blocks, block{nactvar: len(p.fs.actvar), breakable: breakable})
}

func (p *parser) leaveBlock() {
	fs := p.fs
	b := fs.blocks[len(fs.blocks)-1]
	fs.blocks = fs.blocks[:len(fs.blocks)-1]
	fs.actvar = fs.actvar[:b.nactvar]
}

// resolve is singlevaraux: it finds name as a local of fs or of a function
// around it, adding the upvalues that reaching it takes. It reports
// whether name is a local or upvalue, and where.
func (p *parser) resolve(fs *parseFunc, name string) (found bool, local bool, index int) {
	if fs == nil {
		return false, false, 0
	}
	for i := len(fs.actvar) - 1; i >= 0; i-- {
		if fs.actvar[i] == name {
			return true, true, i
		}
	}
	found, local, index = p.resolve(fs.prev, name)
	if !found {
		return false, false, 0
	}
	for i, u := range fs.upvals {
		if u.local == local && u.index == index {
			return true, false, i
		}
	}
	if len(fs.upvals)+1 > maxUpvalues {
		p.errorLimit(fs, maxUpvalues, "upvalues")
	}
	fs.upvals = append(fs.upvals, parseUpval{local: local, index: index})
	return true, false, len(fs.upvals) - 1
}

// Grammar.

func blockFollow(t int) bool {
	switch t {
	case tkElse, tkElseif, tkEnd, tkUntil, tkEOS:
		return true
	}
	return false
}

// chunk -> { stat [';'] }
func (p *parser) chunk() []ast.Stmt {
	stmts := []ast.Stmt{}
	p.enterLevel()
	for last := false; !last && !blockFollow(p.tok.t); {
		var s ast.Stmt
		start := p.here()
		s, last = p.statement()
		p.markFirst(s, start)
		p.markAfter(s)
		stmts = append(stmts, s)
		p.testNext(';')
	}
	p.leaveLevel()
	return stmts
}

func (p *parser) block() []ast.Stmt {
	p.enterBlock(false)
	stmts := p.chunk()
	p.leaveBlock()
	return stmts
}

func (p *parser) statement() (ast.Stmt, bool) {
	line := p.lex.line
	tline := p.tok.line
	switch p.tok.t {
	case tkIf:
		return p.ifStat(line, tline), false
	case tkWhile:
		p.next()
		cond := p.expr()
		p.enterBlock(true)
		p.checkNext(tkDo)
		body := p.block()
		s := &ast.WhileStmt{Condition: cond, Stmts: body}
		p.bodyEnds[s] = p.lastline
		s.SetLine(tline)
		s.SetLastLine(p.tok.line)
		p.markEnd(s)
		p.checkMatch(tkEnd, tkWhile, line)
		p.leaveBlock()
		return s, false
	case tkDo:
		p.next()
		body := p.block()
		s := &ast.DoBlockStmt{Stmts: body}
		s.SetLine(tline)
		s.SetLastLine(p.tok.line)
		p.checkMatch(tkEnd, tkDo, line)
		return s, false
	case tkFor:
		return p.forStat(line), false
	case tkRepeat:
		p.enterBlock(true)
		p.enterBlock(false)
		p.next()
		body := p.chunk()
		p.checkMatch(tkUntil, tkRepeat, line)
		cond := p.expr()
		p.leaveBlock()
		p.leaveBlock()
		s := &ast.RepeatStmt{Condition: cond, Stmts: body}
		s.SetLine(tline)
		s.SetLastLine(cond.Line())
		return s, false
	case tkFunction:
		return p.funcStat(line, tline), false
	case tkLocal:
		p.next()
		if p.testNext(tkFunction) {
			name, _ := p.checkName()
			p.newLocal(name, 0)
			p.adjustLocals(1)
			f := p.body(false, p.lex.line)
			s := &ast.LocalAssignStmt{Names: []string{name}, Exprs: []ast.Expr{f}}
			p.localFunctions[s] = true
			s.SetLine(tline)
			s.SetLastLine(f.LastLine())
			return s, false
		}
		return p.localStat(tline), false
	case tkReturn:
		p.next()
		s := &ast.ReturnStmt{}
		s.SetLine(tline)
		if !blockFollow(p.tok.t) && p.tok.t != ';' {
			s.Exprs = p.exprList()
		}
		return s, true
	case tkBreak:
		p.next()
		breakable := false
		for i := len(p.fs.blocks) - 1; i >= 0; i-- {
			if p.fs.blocks[i].breakable {
				breakable = true
				break
			}
		}
		if !breakable {
			p.syntaxError("no loop to break")
		}
		s := &ast.BreakStmt{}
		s.SetLine(tline)
		return s, true
	}
	return p.exprStat(), false
}

func (p *parser) ifStat(line, tline int) ast.Stmt {
	// IF cond THEN block {ELSEIF cond THEN block} [ELSE block] END
	top := p.testThenBlock()
	top.SetLine(tline)
	cur := top
	for p.tok.t == tkElseif {
		eline := p.tok.line
		next := p.testThenBlock()
		next.SetLine(eline)
		cur.Else = []ast.Stmt{next}
		cur = next
	}
	if p.tok.t == tkElse {
		p.next()
		cur.Else = p.block()
	}
	top.SetLastLine(p.tok.line)
	p.checkMatch(tkEnd, tkIf, line)
	return top
}

// testThenBlock reads [IF | ELSEIF] cond THEN block; the caller sets the
// statement's line.
func (p *parser) testThenBlock() *ast.IfStmt {
	p.next()
	cond := p.expr()
	p.checkNext(tkThen)
	s := &ast.IfStmt{Condition: cond, Then: p.block()}
	p.bodyEnds[s] = p.lastline
	return s
}

func (p *parser) forStat(line int) ast.Stmt {
	tline := p.tok.line
	p.enterBlock(true)
	p.next()
	name, _ := p.checkName()
	var s ast.Stmt
	switch p.tok.t {
	case '=':
		p.newLocal("(for index)", 0)
		p.newLocal("(for limit)", 1)
		p.newLocal("(for step)", 2)
		p.newLocal(name, 3)
		p.next()
		f := &ast.NumberForStmt{Name: name}
		f.Init = p.expr()
		p.checkNext(',')
		f.Limit = p.expr()
		if p.testNext(',') {
			f.Step = p.expr()
		}
		f.Stmts = p.forBody(1)
		s = f
	case ',', tkIn:
		p.newLocal("(for generator)", 0)
		p.newLocal("(for state)", 1)
		p.newLocal("(for control)", 2)
		p.newLocal(name, 3)
		names := []string{name}
		for p.testNext(',') {
			n, _ := p.checkName()
			p.newLocal(n, len(names)+3)
			names = append(names, n)
		}
		p.checkNext(tkIn)
		exprs := p.exprList()
		s = &ast.GenericForStmt{Names: names, Exprs: exprs, Stmts: p.forBody(len(names))}
	default:
		p.syntaxError("'=' or 'in' expected")
	}
	p.bodyEnds[s] = p.lastline
	s.SetLine(tline)
	s.SetLastLine(p.tok.line)
	p.markEnd(s)
	p.checkMatch(tkEnd, tkFor, line)
	p.leaveBlock()
	return s
}

func (p *parser) forBody(nvars int) []ast.Stmt {
	pending := append([]string(nil), p.fs.pending[3:3+nvars]...)
	p.adjustLocals(3)
	p.checkNext(tkDo)
	p.enterBlock(false)
	p.fs.pending = append(p.fs.pending[:0], pending...)
	p.adjustLocals(nvars)
	body := p.block()
	p.leaveBlock()
	return body
}

func (p *parser) funcStat(line, tline int) ast.Stmt {
	// FUNCTION funcname body
	p.next()
	name, nline := p.checkName()
	p.singleVar(name)
	id := &ast.IdentExpr{Value: name}
	id.SetLine(nline)
	fn := &ast.FuncName{Func: id}
	for p.tok.t == '.' {
		p.next()
		key, kline := p.checkName()
		k := &ast.StringExpr{Value: key}
		k.SetLine(kline)
		a := &ast.AttrGetExpr{Object: fn.Func, Key: k}
		a.SetLine(kline)
		fn.Func = a
	}
	method := false
	if p.tok.t == ':' {
		p.next()
		m, _ := p.checkName()
		fn = &ast.FuncName{Receiver: fn.Func, Method: m}
		method = true
	}
	f := p.body(method, line)
	s := &ast.FuncDefStmt{Name: fn, Func: f}
	s.SetLine(tline)
	s.SetLastLine(f.LastLine())
	return s
}

func (p *parser) localStat(tline int) ast.Stmt {
	// LOCAL NAME {',' NAME} ['=' explist1]
	var names []string
	for {
		n, _ := p.checkName()
		p.newLocal(n, len(names))
		names = append(names, n)
		if !p.testNext(',') {
			break
		}
	}
	exprs := []ast.Expr{}
	if p.testNext('=') {
		exprs = p.exprList()
	}
	p.adjustLocals(len(names))
	s := &ast.LocalAssignStmt{Names: names, Exprs: exprs}
	s.SetLine(tline)
	return s
}

// Kinds of what primaryExp read, as lparser.c's expdesc tells them apart
// where the grammar cares: a variable can be assigned, a call can be a
// statement, anything else (a parenthesised expression) neither.
const (
	kindOther = iota
	kindVar
	kindCall
)

func (p *parser) exprStat() ast.Stmt {
	e, kind := p.primaryExp()
	if kind == kindCall {
		s := &ast.FuncCallStmt{Expr: e}
		s.SetLine(e.Line())
		return s
	}
	lhs := []ast.Expr{e}
	if kind != kindVar {
		p.syntaxError("syntax error")
	}
	for p.testNext(',') {
		e, kind := p.primaryExp()
		if limit := maxLevels - p.level; len(lhs) > limit {
			p.errorLimit(p.fs, limit, "variables in assignment")
		}
		if kind != kindVar {
			p.syntaxError("syntax error")
		}
		lhs = append(lhs, e)
	}
	p.checkNext('=')
	s := &ast.AssignStmt{Lhs: lhs, Rhs: p.exprList()}
	s.SetLine(lhs[0].Line())
	return s
}
