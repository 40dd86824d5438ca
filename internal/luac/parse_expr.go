package luac

import (
	"strconv"

	"github.com/yuin/gopher-lua/ast"
)

// The expressions' half of the parser: function bodies, calls, primary,
// simple and binary expressions, and table constructors, as lparser.c
// reads them.

// body ->  '(' parlist ')' chunk END, for a function defined at line.
func (p *parser) body(method bool, line int) *ast.FunctionExpr {
	p.openFunc(line)
	f := &ast.FunctionExpr{ParList: &ast.ParList{Names: []string{}}}
	f.SetLine(p.tok.line)
	p.checkNext('(')
	if method {
		p.newLocal("self", 0)
		p.adjustLocals(1)
	}
	// parlist -> [ param { ',' param } ]
	if p.tok.t != ')' {
		for {
			switch p.tok.t {
			case tkName:
				n, _ := p.checkName()
				p.newLocal(n, len(f.ParList.Names))
				f.ParList.Names = append(f.ParList.Names, n)
			case tkDots:
				p.next()
				// LUA_COMPAT_VARARG: a vararg function has a local "arg".
				p.newLocal("arg", len(f.ParList.Names))
				f.ParList.HasVargs = true
			default:
				p.syntaxError("<name> or '...' expected")
			}
			if f.ParList.HasVargs || !p.testNext(',') {
				break
			}
		}
	}
	n := len(f.ParList.Names)
	if f.ParList.HasVargs {
		n++
	}
	p.adjustLocals(n)
	p.fs.vararg = f.ParList.HasVargs
	p.checkNext(')')
	f.Stmts = p.chunk()
	f.SetLastLine(p.tok.line)
	p.checkMatch(tkEnd, tkFunction, line)
	p.markAfter(f)
	p.closeFunc()
	return f
}

func (p *parser) exprList() []ast.Expr {
	list := []ast.Expr{p.expr()}
	for p.testNext(',') {
		list = append(list, p.expr())
	}
	return list
}

// funcArgs reads a call's arguments.
func (p *parser) funcArgs() []ast.Expr {
	line := p.lex.line
	switch p.tok.t {
	case '(':
		if line != p.lastline {
			p.syntaxError("ambiguous syntax (function call x new statement)")
		}
		p.next()
		args := []ast.Expr{}
		if p.tok.t != ')' {
			args = p.exprList()
		}
		p.checkMatch(')', '(', line)
		return args
	case '{':
		return []ast.Expr{p.constructor()}
	case tkString:
		s := &ast.StringExpr{Value: p.tok.str}
		s.SetLine(p.tok.line)
		p.next()
		return []ast.Expr{s}
	}
	p.syntaxError("function arguments expected")
	return nil
}

// prefixExp -> NAME | '(' expr ')'
func (p *parser) prefixExp() (ast.Expr, int) {
	switch p.tok.t {
	case '(':
		line, tline := p.lex.line, p.tok.line
		p.next()
		e := p.expr()
		p.checkMatch(')', '(', line)
		// gopher-lua's grammar reads a parenthesised call as the call,
		// marked to give one value; anything else takes the line of '('.
		if call, ok := e.(*ast.FuncCallExpr); ok && !call.AdjustRet {
			call.AdjustRet = true
			return e, kindOther
		}
		if v, ok := e.(*ast.Comma3Expr); ok {
			v.AdjustRet = true
		}
		e.SetLine(tline)
		return e, kindOther
	case tkName:
		name, line := p.tok.str, p.tok.line
		p.next()
		p.singleVar(name)
		id := &ast.IdentExpr{Value: name}
		id.SetLine(line)
		return id, kindVar
	}
	p.syntaxError("unexpected symbol")
	return nil, kindOther
}

func (p *parser) singleVar(name string) { p.resolve(p.fs, name) }

// primaryExp -> prefixexp { '.' NAME | '[' exp ']' | ':' NAME funcargs | funcargs }
func (p *parser) primaryExp() (ast.Expr, int) {
	start := p.here()
	e, kind := p.prefixExp()
	for {
		p.markFirst(e, start)
		p.markAfter(e)
		switch p.tok.t {
		case '.':
			p.next()
			name, line := p.checkName()
			k := &ast.StringExpr{Value: name}
			k.SetLine(line)
			a := &ast.AttrGetExpr{Object: e, Key: k}
			a.SetLine(e.Line())
			e, kind = a, kindVar
		case '[':
			p.next()
			k := p.expr()
			p.checkNext(']')
			a := &ast.AttrGetExpr{Object: e, Key: k}
			a.SetLine(e.Line())
			e, kind = a, kindVar
		case ':':
			p.next()
			name, _ := p.checkName()
			c := &ast.FuncCallExpr{Receiver: e, Method: name}
			p.markOpen(c)
			c.Args = p.funcArgs()
			c.SetLine(e.Line())
			e, kind = c, kindCall
		case '(', tkString, '{':
			c := &ast.FuncCallExpr{Func: e}
			p.markOpen(c)
			c.Args = p.funcArgs()
			c.SetLine(e.Line())
			e, kind = c, kindCall
		default:
			return e, kind
		}
	}
}

func (p *parser) simpleExp() ast.Expr {
	var e ast.Expr
	switch p.tok.t {
	case tkNumber:
		e = &ast.NumberExpr{Value: numberValue(p.tok.str, p.tok.num)}
	case tkString:
		e = &ast.StringExpr{Value: p.tok.str}
	case tkNil:
		e = &ast.NilExpr{}
	case tkTrue:
		e = &ast.TrueExpr{}
	case tkFalse:
		e = &ast.FalseExpr{}
	case tkDots:
		if !p.fs.vararg {
			p.syntaxError("cannot use '...' outside a vararg function")
		}
		e = &ast.Comma3Expr{}
	case '{':
		return p.constructor()
	case tkFunction:
		tline := p.tok.line
		p.next()
		body := p.body(false, p.lex.line)
		f := &ast.FunctionExpr{ParList: body.ParList, Stmts: body.Stmts}
		f.SetLine(tline)
		f.SetLastLine(body.LastLine())
		return f
	default:
		e, _ := p.primaryExp()
		return e
	}
	e.SetLine(p.tok.line)
	p.next()
	return e
}

func (p *parser) constructor() ast.Expr {
	line := p.lex.line
	start := p.here()
	t := &ast.TableExpr{Fields: []*ast.Field{}}
	t.SetLine(p.tok.line)
	p.checkNext('{')
	for {
		if p.tok.t == '}' {
			break
		}
		fieldStart := p.here()
		n := len(t.Fields)
		switch p.tok.t {
		case tkName:
			p.lookahead()
			if p.ahead.t != '=' {
				t.Fields = append(t.Fields, &ast.Field{Value: p.expr()})
				break
			}
			name, kline := p.checkName()
			k := &ast.StringExpr{Value: name}
			k.SetLine(kline)
			p.checkNext('=')
			t.Fields = append(t.Fields, &ast.Field{Key: k, Value: p.expr()})
		case '[':
			p.next()
			k := p.expr()
			p.checkNext(']')
			p.checkNext('=')
			t.Fields = append(t.Fields, &ast.Field{Key: k, Value: p.expr()})
		default:
			t.Fields = append(t.Fields, &ast.Field{Value: p.expr()})
		}
		if p.marks != nil && len(t.Fields) > n {
			p.marks.of(t.Fields[n].Value).field = fieldStart
		}
		if !p.testNext(',') && !p.testNext(';') {
			break
		}
		if len(t.Fields) > n {
			p.fieldEnds[t.Fields[n]] = p.lastline
		}
	}
	p.checkMatch('}', '{', line)
	p.closeLines[t] = p.lastline
	p.markFirst(t, start)
	p.markAfter(t)
	return t
}

// Operators with their left and right priorities, as lparser.c's table.
type binop struct {
	left, right int
	make        func(lhs, rhs ast.Expr) ast.Expr
}

// binopOf indexes binops by token, for the lookup after every operand.
var binopOf = func() (t [tkEOS + 1]*binop) {
	for tok, b := range binops {
		t[tok] = &b
	}
	return t
}()

func arith(op string) func(l, r ast.Expr) ast.Expr {
	return func(l, r ast.Expr) ast.Expr { return &ast.ArithmeticOpExpr{Operator: op, Lhs: l, Rhs: r} }
}

func relational(op string) func(l, r ast.Expr) ast.Expr {
	return func(l, r ast.Expr) ast.Expr { return &ast.RelationalOpExpr{Operator: op, Lhs: l, Rhs: r} }
}

func logical(op string) func(l, r ast.Expr) ast.Expr {
	return func(l, r ast.Expr) ast.Expr { return &ast.LogicalOpExpr{Operator: op, Lhs: l, Rhs: r} }
}

var binops = map[int]binop{
	'+': {6, 6, arith("+")}, '-': {6, 6, arith("-")},
	'*': {7, 7, arith("*")}, '/': {7, 7, arith("/")}, '%': {7, 7, arith("%")},
	'^':      {10, 9, arith("^")},
	tkConcat: {5, 4, func(l, r ast.Expr) ast.Expr { return &ast.StringConcatOpExpr{Lhs: l, Rhs: r} }},
	tkNe:     {3, 3, relational("~=")}, tkEq: {3, 3, relational("==")},
	'<': {3, 3, relational("<")}, tkLe: {3, 3, relational("<=")},
	'>': {3, 3, relational(">")}, tkGe: {3, 3, relational(">=")},
	tkAnd: {2, 2, logical("and")}, tkOr: {1, 1, logical("or")},
}

const unaryPriority = 8

func (p *parser) expr() ast.Expr {
	e, _ := p.subExpr(0)
	return e
}

// subExpr -> (simpleexp | unop subexpr) { binop subexpr }, taking binary
// operators whose left priority is above limit; it returns the first
// operator it left.
func (p *parser) subExpr(limit int) (ast.Expr, int) {
	p.enterLevel()
	start := p.here()
	var e ast.Expr
	switch op := p.tok.t; op {
	case tkNot, '-', '#':
		p.next()
		operand, _ := p.subExpr(unaryPriority)
		switch op {
		case tkNot:
			e = &ast.UnaryNotOpExpr{Expr: operand}
		case '-':
			e = &ast.UnaryMinusOpExpr{Expr: operand}
		default:
			e = &ast.UnaryLenOpExpr{Expr: operand}
		}
		e.SetLine(operand.Line())
	default:
		e = p.simpleExp()
	}
	op := p.tok.t
	for {
		b := binopOf[op]
		if b == nil || b.left <= limit {
			break
		}
		p.next()
		rhs, nextop := p.subExpr(b.right)
		lhs := e
		e = b.make(lhs, rhs)
		e.SetLine(lhs.Line())
		op = nextop
	}
	p.markFirst(e, start)
	p.markAfter(e)
	p.leaveLevel()
	return e, op
}

// numberValue is the NumberExpr value for a numeral: its text where
// gopher-lua's parser would write a text that reads as v (gopher-lua drops
// a leading zero before a digit so that "010" is not octal), else v in a
// form that reads back exactly.
func numberValue(text string, v float64) string {
	if len(text) > 1 && text[0] == '0' && isDigit(int(text[1])) {
		text = text[1:]
	}
	if n, err := strconv.ParseInt(text, 0, 64); err == nil {
		if float64(n) == v {
			return text
		}
	} else if f, err := strconv.ParseFloat(text, 64); err == nil && f == v {
		return text
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
