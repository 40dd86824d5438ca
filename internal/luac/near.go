package luac

import "github.com/yuin/gopher-lua/ast"

// Lua 5.1 generates code while it parses, so an error of the code
// generator, "function or expression too complex" (250 registers) or
// "control structure too long" (a jump past 131,071 instructions), names
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
	// end is a loop's 'end', where Lua 5.1 patches its jump back.
	end *nearToken
}

// marks are keyed by expression, by statement for a loop's end, and by
// endOfChunk for the token after the chunk.
type marks map[any]*exprMarks

type endOfChunk struct{}

func (m marks) of(e any) *exprMarks {
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
func (p *parser) markFirst(e any, first *nearToken) {
	if p.marks != nil && first != nil {
		p.marks.of(e).first = first
	}
}

func (p *parser) markAfter(e any) {
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

// markEnd records the 'end' of loop s.
func (p *parser) markEnd(s ast.Stmt) {
	if p.marks != nil {
		p.marks.of(s).end = p.here()
	}
}

// nearAt makes the token the code generator is at the one marked for e
// by pick, where there is one.
func (fs *funcState) nearAt(e any, pick func(*exprMarks) *nearToken) {
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
func loopEnd(m *exprMarks) *nearToken    { return m.end }

const tooComplex = "function or expression too complex"

const tooLong = "control structure too long"

// errorNear is luaX_syntaxerror for the code generator's errors (too
// complex, too long): msg near the token Lua 5.1 would hold, where the
// chunk was parsed with marks.
func (fs *funcState) errorNear(msg string) {
	if fs.near != nil {
		fs.line = fs.near.line
		fs.errorf("%s near '%s'", msg, fs.near.text)
	}
	fs.errorf("%s", msg)
}

// nearError compiles the chunk again, parsed with marks, for the error
// err (without a token) with the token Lua 5.1 names; err where that
// compile does not fail the same way.
func nearError(src []byte, chunkName string, levels int, display string, err error) error {
	m := marks{}
	chunk, facts, perr := parseMarked(src, chunkName, levels, nil, m)
	if perr != nil {
		return err
	}
	if _, merr := compileMarked(chunk, facts, m, display); merr != nil {
		return merr
	}
	return err
}
