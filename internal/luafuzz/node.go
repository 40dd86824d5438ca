package luafuzz

import (
	"fmt"
	"strings"
)

// kind says what a shrinker may do with a node: drop a statement, replace
// an expression by one of its subexpressions, leave text alone.
type kind uint8

const (
	text kind = iota
	stmt
	expr
)

// node is a piece of a generated program. The program is kept as a tree
// rather than a string so that the shrinker can drop whole statements and
// replace expressions by their parts without ever producing a syntax error
// of its own making.
type node struct {
	kind  kind
	parts []any // string or *node
	cut   bool  // a statement left out
	sub   *node // an expression written as this subexpression instead
}

// mk builds a node from a format whose verbs are %s, each taking a string
// or a *node, and %% for a percent sign. Strings are formatted in at once;
// nodes stay children.
func mk(k kind, format string, args ...any) *node {
	n := &node{kind: k}
	var lit strings.Builder
	used := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			lit.WriteByte(c)
			continue
		}
		i++
		switch format[i] {
		case '%':
			lit.WriteByte('%')
			continue
		case 's':
		default:
			panic(fmt.Sprintf("luafuzz: format %q has a verb other than %%s or %%%%", format))
		}
		if used == len(args) {
			panic(fmt.Sprintf("luafuzz: format %q has more verbs than its %d arguments", format, len(args)))
		}
		switch a := args[used].(type) {
		case *node:
			if lit.Len() > 0 {
				n.parts = append(n.parts, lit.String())
				lit.Reset()
			}
			n.parts = append(n.parts, a)
		case string:
			lit.WriteString(a)
		default:
			lit.WriteString(fmt.Sprint(a))
		}
		used++
	}
	if used != len(args) {
		panic(fmt.Sprintf("luafuzz: format %q has %d verbs for %d arguments", format, used, len(args)))
	}
	if lit.Len() > 0 {
		n.parts = append(n.parts, lit.String())
	}
	return n
}

// lit is an expression written as it is, with no parts to shrink to.
func lit(s string) *node { return &node{kind: expr, parts: []any{s}} }

// block joins statements, one a line, under a text node.
func block(stmts []*node) *node {
	n := &node{kind: text}
	for _, s := range stmts {
		n.parts = append(n.parts, s, "\n")
	}
	return n
}

func (n *node) String() string {
	var b strings.Builder
	n.write(&b)
	return b.String()
}

func (n *node) write(b *strings.Builder) {
	if n.cut {
		return
	}
	if n.sub != nil {
		n.sub.write(b)
		return
	}
	for _, p := range n.parts {
		switch p := p.(type) {
		case string:
			b.WriteString(p)
		case *node:
			p.write(b)
		}
	}
}

// subexprs are the expression children of n, the candidates to replace it.
func (n *node) subexprs() []*node {
	var out []*node
	for _, p := range n.parts {
		if c, ok := p.(*node); ok && c.kind == expr {
			out = append(out, c)
		}
	}
	return out
}

// walk visits n and, as they are written now, its descendants, parents
// first.
func (n *node) walk(visit func(*node)) {
	if n.cut {
		return
	}
	visit(n)
	if n.sub != nil {
		n.sub.walk(visit)
		return
	}
	for _, p := range n.parts {
		if c, ok := p.(*node); ok {
			c.walk(visit)
		}
	}
}
