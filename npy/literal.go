package npy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// An .npy header is a Python dict literal, which NumPy reads with
// ast.literal_eval. This is the subset NumPy writes and any header of a
// numeric array can hold: dicts, tuples, lists, strings, integers, True,
// False and None. Values parse to map[string]any, tuple, list, string,
// int64, bool and nil.
type (
	tuple []any
	list  []any
)

// maxNesting bounds how deep literals nest: a structured dtype nests a few
// levels, and a header of a thousand '(' must not recurse a thousand deep.
const maxNesting = 32

type literalParser struct {
	s     string
	pos   int
	depth int
}

// parseLiteral parses s as one Python literal, surrounded by nothing but
// white space.
func parseLiteral(s string) (any, error) {
	p := &literalParser{s: s}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if p.skipSpace(); p.pos < len(p.s) {
		return nil, p.errorf("unexpected %q after the end", p.rest())
	}
	return v, nil
}

func (p *literalParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", p.pos, fmt.Sprintf(format, args...))
}

// rest is what is left to parse, shortened for an error message.
func (p *literalParser) rest() string {
	r := p.s[p.pos:]
	if len(r) > 16 {
		r = r[:16] + "..."
	}
	return r
}

func (p *literalParser) skipSpace() {
	for p.pos < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *literalParser) value() (any, error) {
	p.skipSpace()
	if p.pos >= len(p.s) {
		return nil, p.errorf("unexpected end")
	}
	switch c := p.s[p.pos]; {
	case c == '{' || c == '(' || c == '[':
		if p.depth++; p.depth > maxNesting {
			return nil, p.errorf("nested more than %d deep", maxNesting)
		}
		defer func() { p.depth-- }()
		p.pos++
		switch c {
		case '{':
			return p.dict()
		case '(':
			return p.sequence(')')
		default:
			items, err := p.sequence(']')
			if t, ok := items.(tuple); ok {
				return list(t), err
			}
			return items, err
		}
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || (c >= '0' && c <= '9'):
		return p.integer()
	default:
		return p.name()
	}
}

// dict parses the rest of {key: value, ...}; keys are strings.
func (p *literalParser) dict() (any, error) {
	d := map[string]any{}
	for {
		if p.skipSpace(); p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return d, nil
		}
		k, err := p.value()
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			return nil, p.errorf("dict key %v is not a string", k)
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		if d[key], err = p.value(); err != nil {
			return nil, err
		}
		if done, err := p.separator('}'); done || err != nil {
			return d, err
		}
	}
}

// sequence parses the rest of a tuple or list up to end. As in Python,
// (x) is x, not a tuple.
func (p *literalParser) sequence(end byte) (any, error) {
	var items tuple
	comma := false
	for {
		if p.skipSpace(); p.pos < len(p.s) && p.s[p.pos] == end {
			p.pos++
			break
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		items = append(items, v)
		done, err := p.separator(end)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
		comma = true
	}
	if end == ')' && len(items) == 1 && !comma {
		return items[0], nil
	}
	if items == nil {
		items = tuple{}
	}
	return items, nil
}

// separator reads the ',' between items or the closing end; done says the
// closing end was read.
func (p *literalParser) separator(end byte) (done bool, err error) {
	p.skipSpace()
	if p.pos >= len(p.s) {
		return false, p.errorf("unexpected end, expected ',' or %q", end)
	}
	switch p.s[p.pos] {
	case ',':
		p.pos++
		return false, nil
	case end:
		p.pos++
		return true, nil
	}
	return false, p.errorf("unexpected %q, expected ',' or %q", p.rest(), end)
}

func (p *literalParser) expect(c byte) error {
	if p.skipSpace(); p.pos < len(p.s) && p.s[p.pos] == c {
		p.pos++
		return nil
	}
	if p.pos >= len(p.s) {
		return p.errorf("unexpected end, expected %q", c)
	}
	return p.errorf("unexpected %q, expected %q", p.rest(), c)
}

// str parses a quoted string. Escapes keep the escaped character: no dtype
// string has any, so a header that uses them is refused later for its
// value, not here for its syntax.
func (p *literalParser) str() (any, error) {
	quote := p.s[p.pos]
	p.pos++
	var b strings.Builder
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		p.pos++
		switch {
		case c == quote:
			return b.String(), nil
		case c == '\\' && p.pos < len(p.s):
			b.WriteByte(p.s[p.pos])
			p.pos++
		case c == '\n':
			return nil, p.errorf("newline inside a string")
		default:
			b.WriteByte(c)
		}
	}
	return nil, p.errorf("unterminated string")
}

// integer parses a decimal integer; a trailing L (Python 2's long, in
// headers NumPy wrote under Python 2) is accepted.
func (p *literalParser) integer() (any, error) {
	start := p.pos
	if c := p.s[p.pos]; c == '-' || c == '+' {
		p.pos++
	}
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.ParseInt(p.s[start:p.pos], 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return nil, p.errorf("integer %s is too large", p.s[start:p.pos])
		}
		return nil, p.errorf("bad number %q", p.s[start:p.pos])
	}
	if p.pos < len(p.s) && (p.s[p.pos] == 'L' || p.s[p.pos] == 'l') {
		p.pos++
	}
	return n, nil
}

func (p *literalParser) name() (any, error) {
	for _, n := range []struct {
		word  string
		value any
	}{{"True", true}, {"False", false}, {"None", nil}} {
		if strings.HasPrefix(p.s[p.pos:], n.word) {
			p.pos += len(n.word)
			return n.value, nil
		}
	}
	return nil, p.errorf("unexpected %q", p.rest())
}

// repr writes a parsed value back as Python would print it, for errors.
func repr(v any) string {
	switch v := v.(type) {
	case string:
		return pyQuote(v)
	case bool:
		if v {
			return "True"
		}
		return "False"
	case nil:
		return "None"
	case tuple:
		if len(v) == 1 {
			return "(" + repr(v[0]) + ",)"
		}
		return "(" + reprItems(v) + ")"
	case list:
		return "[" + reprItems(v) + "]"
	case map[string]any:
		return "{...}"
	}
	return fmt.Sprint(v)
}

func reprItems(items []any) string {
	parts := make([]string, len(items))
	for i, x := range items {
		parts[i] = repr(x)
	}
	return strings.Join(parts, ", ")
}
