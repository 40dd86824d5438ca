// Command elementwisegen writes kernels/elementwise_loops.go, the Go loops
// of the elementwise kernels in the table of kernels/elementwise_ops.go.
// Run it with go generate ./kernels.
//
// It reads the table as source rather than importing package kernels, so
// that it runs while an entry added to the table has no loops yet. Each
// entry's Go function, written in float64, becomes a function generic in
// its compute type (float64 replaced by C, so that a conversion float64(·)
// rounds to C), and a loop calling it, which the compiler inlines: a loop
// calling the table's func value instead would cost an indirect call per
// element, several times the arithmetic. The same function serves the
// integer dtypes, in their own Go types, unless the entry has an IntGo
// function, written in int64: that one becomes the integer dtypes' own
// (int64 replaced by C).
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"log"
	"os"
	"regexp"
	"strconv"
	"strings"
)

const (
	tableFile = "elementwise_ops.go"
	loopsFile = "elementwise_loops.go"
	tableVar  = "elementwiseOps"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("elementwisegen: ")
	src, err := os.ReadFile(tableFile)
	if err != nil {
		log.Fatal(err)
	}
	out, err := generate(src)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(loopsFile, out, 0o644); err != nil {
		log.Fatal(err)
	}
}

// entry is what the loops need of one table entry.
type entry struct {
	name   string
	arrays int
	fn     function  // from Go
	intFn  *function // from IntGo; nil when Go serves the integers too
	// nanOperands are the operands of CUDA, in the order it names them,
	// as the loops spell them; nil for an entry that Selects, whose NaN
	// results keep their bits
	nanOperands []string
}

// function is a table function as the generic one it becomes.
type function struct {
	params []string // parameter names, "_" included
	body   string   // float64 or int64 replaced by C
}

// generate returns the loops file for the table source src.
func generate(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, tableFile, src, 0)
	if err != nil {
		return nil, err
	}
	table := findTable(f)
	if table == nil {
		return nil, fmt.Errorf("%s: no var %s = []*ElementwiseOp{...}", tableFile, tableVar)
	}
	var entries []entry
	for _, elt := range table.Elts {
		e, err := readEntry(fset, elt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fset.Position(elt.Pos()), err)
		}
		entries = append(entries, e)
	}
	return format.Source(write(entries))
}

func findTable(f *ast.File) *ast.CompositeLit {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if len(v.Names) == 1 && v.Names[0].Name == tableVar && len(v.Values) == 1 {
				lit, _ := v.Values[0].(*ast.CompositeLit)
				return lit
			}
		}
	}
	return nil
}

var luaName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func readEntry(fset *token.FileSet, elt ast.Expr) (entry, error) {
	lit, ok := elt.(*ast.CompositeLit)
	if !ok {
		return entry{}, fmt.Errorf("a table entry must be a literal {Name: ..., ...}")
	}
	var e entry
	var fn, intFn *ast.FuncLit
	var hasIntGo, hasIntCUDA, selects bool
	var cuda string
	for _, kv := range lit.Elts {
		kv, ok := kv.(*ast.KeyValueExpr)
		var key *ast.Ident
		if ok {
			key, _ = kv.Key.(*ast.Ident)
		}
		if key == nil {
			return e, fmt.Errorf("table entries name their fields")
		}
		switch key.Name {
		case "Name":
			e.name = stringLit(kv.Value)
		case "Arrays":
			if b, ok := kv.Value.(*ast.BasicLit); ok {
				e.arrays, _ = strconv.Atoi(b.Value)
			}
		case "Go":
			fn, _ = kv.Value.(*ast.FuncLit)
		case "IntGo":
			hasIntGo = true
			intFn, _ = kv.Value.(*ast.FuncLit)
		case "IntCUDA":
			hasIntCUDA = true
		case "CUDA":
			cuda = stringLit(kv.Value)
		case "Selects":
			id, _ := kv.Value.(*ast.Ident)
			selects = id != nil && id.Name == "true"
		}
	}
	switch {
	case !luaName.MatchString(e.name):
		return e, fmt.Errorf("Name %q is not a lower-case Lua name", e.name)
	case e.arrays != 1 && e.arrays != 2:
		return e, fmt.Errorf("%s: Arrays must be the literal 1 or 2", e.name)
	case fn == nil:
		return e, fmt.Errorf("%s: Go must be a function literal", e.name)
	case hasIntGo != hasIntCUDA:
		return e, fmt.Errorf("%s: IntGo and IntCUDA go together: set both or neither", e.name)
	case hasIntGo && intFn == nil:
		return e, fmt.Errorf("%s: IntGo must be a function literal", e.name)
	}
	var err error
	if e.fn, err = generic(fset, fn, "float64"); err != nil {
		return e, fmt.Errorf("%s: Go must be func(y, x, a float64) float64", e.name)
	}
	if intFn != nil {
		f, err := generic(fset, intFn, "int64")
		if err != nil {
			return e, fmt.Errorf("%s: IntGo must be func(y, x, a int64) int64", e.name)
		}
		e.intFn = &f
	}
	if !selects {
		if e.nanOperands = operands(cuda); len(e.nanOperands) == 0 {
			return e, fmt.Errorf("%s: CUDA must be a string literal naming y, x or a", e.name)
		}
	}
	return e, nil
}

// generic is fn, a function of three parameters, with the type typ
// replaced by C throughout its body.
func generic(fset *token.FileSet, fn *ast.FuncLit, typ string) (function, error) {
	var f function
	for _, field := range fn.Type.Params.List {
		for _, n := range field.Names {
			f.params = append(f.params, n.Name)
		}
	}
	if len(f.params) != 3 {
		return f, fmt.Errorf("%d parameters", len(f.params))
	}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == typ {
			id.Name = "C"
		}
		return true
	})
	var body bytes.Buffer
	if err := printer.Fprint(&body, fset, fn.Body); err != nil {
		return f, err
	}
	f.body = body.String()
	return f, nil
}

func stringLit(x ast.Expr) string {
	if b, ok := x.(*ast.BasicLit); ok && b.Kind == token.STRING {
		s, _ := strconv.Unquote(b.Value)
		return s
	}
	return ""
}

var operand = regexp.MustCompile(`\b[yxa]\b`)

// operands are the operands the CUDA expression cuda names, in order, as
// the loops spell them.
func operands(cuda string) []string {
	spell := map[string]string{"y": "ys[i]", "x": "xs[i]", "a": "a"}
	var out []string
	for _, name := range operand.FindAllString(cuda, -1) {
		out = append(out, spell[name])
	}
	return out
}

// goIdent turns a Lua name into the Go identifier the loops are named by:
// max_abs becomes elementwiseMaxAbs.
func goIdent(name string) string {
	var b strings.Builder
	b.WriteString("elementwise")
	for _, part := range strings.Split(name, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

func write(entries []entry) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by go run ./internal/elementwisegen from " + tableFile + "; DO NOT EDIT.\n\n")
	b.WriteString("package kernels\n\n")
	b.WriteString("var generatedLoops = map[string]elementwiseLoops{\n")
	for _, e := range entries {
		id, intID := goIdent(e.name), goIdent(e.name)
		if e.intFn != nil {
			intID += "Int"
		}
		fmt.Fprintf(&b, "%q: {%sLoop[float32], %sLoop[float64], %sLoop[int32], %sLoop[int64], %sLoop[uint8]},\n",
			e.name, id, id, intID, intID, intID)
	}
	b.WriteString("}\n")
	for _, e := range entries {
		id := goIdent(e.name)
		if e.intFn == nil {
			writeFunc(&b, id, "computeType", e.fn, e.arrays, e.nanOperands)
			continue
		}
		writeFunc(&b, id, "floatCompute", e.fn, e.arrays, e.nanOperands)
		writeFunc(&b, id+"Int", "intCompute", *e.intFn, e.arrays, nil)
	}
	return b.Bytes()
}

// writeFunc writes f as the generic function id, constrained by
// constraint, and its loop idLoop. Where nanOperands is set, the loop
// makes a NaN result the GPU's from them (arithNaN); the comparison is
// false for integers, and the compiler drops it from their loops.
func writeFunc(b *bytes.Buffer, id, constraint string, f function, arrays int, nanOperands []string) {
	fmt.Fprintf(b, "\nfunc %s[C %s](%s C) C %s\n", id, constraint, strings.Join(f.params, ", "), f.body)
	head, call := "out, ys, xs []C, a C", id+"(ys[i], xs[i], a)"
	slices := "ys, xs = ys[:len(out)], xs[:len(out)]"
	if arrays == 1 {
		head, call, slices = "out, xs, _ []C, a C", id+"(0, xs[i], a)", "xs = xs[:len(out)]"
	}
	if nanOperands == nil {
		fmt.Fprintf(b, `
func %[1]sLoop[C %[2]s](%[3]s) {
	%[4]s
	for i := range out {
		out[i] = %[5]s
	}
}
`, id, constraint, head, slices, call)
		return
	}
	fmt.Fprintf(b, `
func %[1]sLoop[C %[2]s](%[3]s) {
	%[4]s
	for i := range out {
		r := %[5]s
		if r != r {
			r = arithNaN(%[6]s)
		}
		out[i] = r
	}
}
`, id, constraint, head, slices, call, strings.Join(nanOperands, ", "))
}
