package luac

import "github.com/yuin/gopher-lua/ast"

// Lua 5.1 generates code while it parses, so an error of the code
// generator, "function or expression too complex" (250 registers), names
// the token the parser holds at that moment: "near '1'". glua's code
// generator works on the syntax tree, which keeps no tokens. On that error
// the chunk is parsed again with marks, the tokens the parser held at the
// points of an expression where Lua 5.1's code generator acts, and
// compiled again: the code generator follows them as it goes and names
// the one Lua 5.1 would have held. Only the failing load pays for this.

// nearToken is a token as the message shows it, with the line lua5.1's
// lexer is on when it holds it.
type nearToken struct {
	text string
	line int
}

// exprMarks are the tokens the parser held around an expression: its
// first, the one after it, the one that opens a call's arguments, and for
// an item of a table constructor the first token of the item (a key's
// '[' or name).
type exprMarks struct {
	first, after, open, field *nearToken
}

type marks map[ast.Expr]*exprMarks

func (m marks) of(e ast.Expr) *exprMarks {
	em := m[e]
	if em == nil {
		em = &exprMarks{}
		m[e] = em
	}
	return em
}

// here is the parser's current token, or nil when not marking.
func (p *parser) here() *nearToken {
	if p.marks == nil {
		return nil
	}
	line := p.lex.line
	if p.hasAhead {
		line = p.tok.line
	}
	return &nearToken{text: p.tok.text(), line: line}
}

// markFirst and markAfter record e's first token and the one after it.
func (p *parser) markFirst(e ast.Expr, first *nearToken) {
	if p.marks != nil && first != nil {
		p.marks.of(e).first = first
	}
}

func (p *parser) markAfter(e ast.Expr) {
	if p.marks != nil {
		p.marks.of(e).after = p.here()
	}
}

// markOpen records the token that opens call c's arguments.
func (p *parser) markOpen(c *ast.FuncCallExpr) {
	if p.marks != nil {
		p.marks.of(c).open = p.here()
	}
}

// nearAt makes the token the code generator is at the one marked for e
// by pick, where there is one.
func (fs *funcState) nearAt(e ast.Expr, pick func(*exprMarks) *nearToken) {
	if fs.marks == nil {
		return
	}
	if m := fs.marks[e]; m != nil {
		if t := pick(m); t != nil {
			fs.near = t
		}
	}
}

func first(m *exprMarks) *nearToken      { return m.first }
func after(m *exprMarks) *nearToken      { return m.after }
func open(m *exprMarks) *nearToken       { return m.open }
func fieldStart(m *exprMarks) *nearToken { return m.field }

const tooComplex = "function or expression too complex"

// errorTooComplex is luaK_checkstack's error: near the token Lua 5.1 would
// hold, where the chunk was parsed with marks.
func (fs *funcState) errorTooComplex() {
	if fs.near != nil {
		fs.line = fs.near.line
		fs.errorf("%s near '%s'", tooComplex, fs.near.text)
	}
	fs.errorf("%s", tooComplex)
}

// nearError compiles the chunk again, parsed with marks, for the error
// err (without a token) with the token Lua 5.1 names; err where that
// compile does not fail the same way.
func nearError(src []byte, chunkName string, levels int, display string, err error) error {
	m := marks{}
	chunk, localFunctions, perr := parseMarked(src, chunkName, levels, m)
	if perr != nil {
		return err
	}
	if _, merr := compileMarked(chunk, localFunctions, m, display); merr != nil {
		return merr
	}
	return err
}
