package jit

import (
	"fmt"
	"strings"

	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/device"
)

// ParseMap accepts fn as the function of kernels.map: its parameters are
// elements (numbers), its body the kernel language without kernels.*
// calls, ending in `return expr`, the element's value.
func ParseMap(fn *ast.FunctionExpr, chunk string) (*Function, error) {
	p := &parser{chunk: chunk, mapFn: true}
	err := p.catch(func() {
		if fn.ParList.HasVargs {
			p.fail(fn.Line(), "a map function cannot take `...`; name each parameter")
		}
		ret := mapReturn(fn)
		if ret == nil {
			p.fail(fn.Line(), "a map function ends with `return expr`, the element's value")
		}
		p.push()
		for _, n := range fn.ParList.Names {
			p.declare(n)
		}
		p.push()
		for _, s := range fn.Stmts[:len(fn.Stmts)-1] {
			p.stmt(s, 0)
		}
		p.expr(ret.Exprs[0])
		p.pop()
		p.pop()
	})
	if err != nil {
		return nil, err
	}
	return &Function{Tree: fn, Chunk: chunk, Params: fn.ParList.Names}, nil
}

// mapReturn is a map function's final `return expr`; nil if it has none.
func mapReturn(fn *ast.FunctionExpr) *ast.ReturnStmt {
	if len(fn.Stmts) == 0 {
		return nil
	}
	r, ok := fn.Stmts[len(fn.Stmts)-1].(*ast.ReturnStmt)
	if !ok || len(r.Exprs) != 1 {
		return nil
	}
	return r
}

// CheckMap types a map function (from ParseMap) for one signature, one
// Arg per parameter (arrays are read flat, whatever their rank), and
// wraps it in a kernel over a flat index: parameter 1 is the output, of
// dtype out, then one per Arg; each thread takes the elements
// i = kernels.grid(1), i + kernels.gridsize(1), ... up to #out, loads each
// array argument's element i into the function's parameter, runs the
// body and stores the returned value, converted to out as a store into
// an array converts it.
//
// A number argument takes the kernel's default float (float32 beside
// float32 arrays) when it is not an integer, as a literal would, so that
// `a * x` with x float32 stays float32 work.
func CheckMap(f *Function, sig Signature, out device.DType, o Options) (*Program, error) {
	if len(sig) != len(f.Params) {
		return nil, &Error{Chunk: f.Chunk, Line: f.Line(), Msg: fmt.Sprintf("the map function takes %d arguments (%s), got %d", len(f.Params), strings.Join(f.Params, ", "), len(sig))}
	}
	name := o.Name
	if name == "" {
		name = "glua_map"
	}
	full := append(Signature{{Array: true, DType: out, Rank: 1}}, sig...)
	t := &typer{parser: parser{chunk: f.Chunk, mapFn: true}, prog: &Program{
		Name: name, Chunk: f.Chunk, Line: f.Line(), Signature: full, CheckBounds: o.CheckBounds,
	}}
	t.defaultFloat = defaultFloat(sig)
	t.what = mapWhat(f)
	err := t.catch(func() { t.mapBody(f, sig, out) })
	if err != nil {
		return nil, err
	}
	return t.prog, nil
}

// mapWhat names a map function in a trap's message.
func mapWhat(f *Function) string { return fmt.Sprintf("the map function at %s:%d", f.Chunk, f.Line()) }

func (t *typer) mapBody(f *Function, sig Signature, out device.DType) {
	outArr := &Array{Name: "out", DType: out, Rank: 1, Param: 0, Shared: -1}
	t.prog.Params = []Param{{Name: "out", Array: outArr, Slot: -1}}
	t.names = []map[string]binding{{}}
	i := t.newLocal("i", Int)
	index := []Expr{&LocalGet{Slot: i, T: Int}}
	before, body := t.mapElements(f, sig, index)
	stmts, x, line := t.mapValue(f, computeType(out))
	body = append(append(body, stmts...), &Store{Arr: outArr, Index: index, X: x, Line: line})
	loop := &For{Slot: i, Start: &Grid{Axis: 0}, Stop: &Size{Arr: outArr}, Step: &GridSize{Axis: 0}, Body: body}
	t.prog.Body = append(before, loop)
	t.prog.Map = &MapLoop{Loop: loop, Out: outArr, Inputs: t.prog.inputArrays()}
}

// inputArrays are the arrays among a map function's program's
// parameters after its first, the array it writes (a map's out, a
// reduction's partials or results): the arrays mapElements reads.
func (p *Program) inputArrays() []*Array {
	var in []*Array
	for _, prm := range p.Params[1:] {
		if prm.Array != nil {
			in = append(in, prm.Array)
		}
	}
	return in
}

// mapElements adds a parameter for each of f's arguments after those
// already in the program: an array read at index into the function's
// parameter (loads, at the top of each element), or a number (a float
// narrowed to float32 once, in before, beside float32 arrays).
func (t *typer) mapElements(f *Function, sig Signature, index []Expr) (before, loads []Stmt) {
	for k, pname := range f.Params {
		a := sig[k]
		if a.Array {
			arr := &Array{Name: fmt.Sprintf("in%d", k+1), DType: a.DType, Rank: 1, Param: len(t.prog.Params), Shared: -1}
			t.prog.Params = append(t.prog.Params, Param{Name: arr.Name, Array: arr, Slot: -1})
			slot := t.newLocal(pname, computeType(a.DType))
			loads = append(loads, &Set{Slot: slot, X: &Load{Arr: arr, Index: index, Line: f.Line()}})
			t.bind(pname, binding{slot: slot})
			continue
		}
		typ := Int
		if a.Float {
			typ = Float64
		}
		slot := t.newLocal(fmt.Sprintf("arg%d", k+1), typ)
		t.prog.Params = append(t.prog.Params, Param{Name: pname, Slot: slot})
		if typ == Float64 && t.defaultFloat == Float32 {
			narrow := t.newLocal(pname, Float32)
			before = append(before, &Set{Slot: narrow, X: &Convert{X: &LocalGet{Slot: slot, T: Float64}, T: Float32}})
			slot = narrow
		} else {
			t.prog.Locals[slot].Name = pname
		}
		t.bind(pname, binding{slot: slot})
	}
	return before, loads
}

// mapValue types the function's body and its returned number; hint is
// the type a literal alone takes.
func (t *typer) mapValue(f *Function, hint Type) ([]Stmt, Expr, int) {
	stmts := f.Tree.Stmts
	ret := stmts[len(stmts)-1].(*ast.ReturnStmt).Exprs[0]
	t.names = append(t.names, map[string]binding{})
	var body []Stmt
	for _, s := range stmts[:len(stmts)-1] {
		body = append(body, t.stmt(s)...)
	}
	x := t.expr(ret, hint)
	if x.Type() == Bool {
		t.fail(ret.Line(), "a map function returns a number, not a boolean (write `cond and 1 or 0` as an if)")
	}
	t.numeric(x, ret)
	return body, x, ret.Line()
}
