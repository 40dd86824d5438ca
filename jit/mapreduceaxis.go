package jit

import (
	"errors"

	"github.com/gluaproject/glua/device"
)

// AxisParams are the number parameters of an axis reduction after out,
// in order: the number of results, the number of values combined into
// each, the flat distance between consecutive results' first elements
// and between consecutive values of one result, and the grid's number of
// blocks.
var AxisParams = []string{"m", "len", "ostride", "kstride", "nblocks"}

// AccumulatorDType is the dtype a map_reduce of f by op over sig combines
// in: int64 for integer values (unless a function op returns floats for
// them), otherwise float64.
func AccumulatorDType(f *Function, sig Signature, op Reduction) (device.DType, error) {
	p, err := CheckMapReduce(f, sig, op, Options{})
	if err != nil {
		return 0, err
	}
	return p.Params[0].Array.DType, nil
}

// CheckMapReduceAxis types a map function (from ParseMap) for sig and
// wraps it in one kernel that reduces along an axis: result o (1-based,
// o = 1..m) combines the values at flat elements (o-1)*ostride +
// (k-1)*kstride + 1 for k = 1..len, by op, and is stored into out[o]
// (converted to out's dtype as a store converts). Its parameters are out
// (1-D, of dtype out), then AxisParams, then one per Arg as in CheckMap
// (arrays read flat).
//
// Block b takes results b, b + nblocks, ...; for each, its thread j
// combines the values k = j, j + ReduceBlock, ... in that order, and the
// block's accumulators are combined as a tree in shared memory as in
// CheckMapReduce (lane j with lane j + w, w = 128, ..., 1). The order
// depends only on len and m, never on timing: the result is the same on
// every run and on the CPU evaluator. Named ops start from their
// identity; a function op from each thread's first value, with threads
// past len taking no part (len must not be 0).
func CheckMapReduceAxis(f *Function, sig Signature, op Reduction, out device.DType, o Options) (*Program, error) {
	name, err := reduceEntry(f, sig, op, o, "glua_map_axis_")
	if err != nil {
		return nil, err
	}
	full := Signature{{Array: true, DType: out, Rank: 1}}
	for range AxisParams {
		full = append(full, Arg{})
	}
	full = append(full, sig...)
	t := &typer{parser: parser{chunk: f.Chunk, mapFn: true}, prog: &Program{
		Name: name, Chunk: f.Chunk, Line: f.Line(), Signature: full, UsesSync: true,
	}}
	t.defaultFloat = defaultFloat(sig)
	t.what = mapWhat(f)
	err = t.catch(func() {
		outArr := &Array{Name: "out", DType: out, Rank: 1, Param: 0, Shared: -1}
		t.names = []map[string]binding{{}}
		t.prog.Params = []Param{{Name: "out", Array: outArr, Slot: -1}}
		num := map[string]Expr{}
		for _, pname := range AxisParams {
			slot := t.newLocal(pname, Int)
			t.prog.Params = append(t.prog.Params, Param{Name: pname, Slot: slot})
			num[pname] = &LocalGet{Slot: slot, T: Int}
		}
		oSlot, kSlot, iSlot := t.newLocal("o", Int), t.newLocal("k", Int), t.newLocal("i", Int)
		res, k := &LocalGet{Slot: oSlot, T: Int}, &LocalGet{Slot: kSlot, T: Int}
		index := []Expr{&LocalGet{Slot: iSlot, T: Int}}
		before, body := t.mapElements(f, sig, index)
		stmts, x, _ := t.mapValue(f, Void)
		r := t.reducer(op, x.Type())
		accSlot := t.newLocal("acc", r.t)
		minus1 := func(e Expr) Expr { return &Arith{Op: "-", X: e, Y: &Const{T: Int, I: 1}, T: Int} }
		mul := func(a, b Expr) Expr { return &Arith{Op: "*", X: a, Y: b, T: Int} }
		// i = (o-1)*ostride + (k-1)*kstride + 1
		flat := &Arith{Op: "+", X: &Arith{Op: "+", X: mul(minus1(res), num["ostride"]), Y: mul(minus1(k), num["kstride"]), T: Int}, Y: &Const{T: Int, I: 1}, T: Int}
		body = append([]Stmt{&Set{Slot: iSlot, X: flat}}, body...)
		body = append(append(body, stmts...), r.accumulate(accSlot, t.to(x, r.t), &Compare{Op: "==", X: k, Y: &Thread{Axis: 0}}))
		values := &For{Slot: kSlot, Start: &Thread{Axis: 0}, Stop: num["len"], Step: &Const{T: Int, I: ReduceBlock}, Body: body}
		var has func(w int64) Expr
		if r.fn != nil {
			has = func(w int64) Expr {
				return &Compare{Op: "<=", X: &Arith{Op: "+", X: &Thread{Axis: 0}, Y: &Const{T: Int, I: w}, T: Int}, Y: num["len"]}
			}
		}
		each := append(append(r.start(accSlot), values), treeReduceAt(t.prog, r, accSlot, outArr, res, has)...)
		// the next result's first store into the tree must wait until lane 1
		// has read this one's
		each = append(each, &SyncThreads{})
		results := &For{Slot: oSlot, Start: &Block{Axis: 0}, Stop: num["m"], Step: num["nblocks"], Body: each}
		t.prog.Body = append(before, results)
	})
	if err != nil {
		return nil, err
	}
	return t.prog, nil
}

// AxisLayout is the reduction of a rows×cols array along axis (1: over
// the rows, one result per column; 2: over the columns, one result per
// row), as CheckMapReduceAxis's parameters m, len, ostride and kstride.
func AxisLayout(rows, cols, axis int) (m, length, ostride, kstride int) {
	if axis == 1 {
		return cols, rows, 1, cols
	}
	return rows, cols, cols, 1
}

// AxisGrid is the number of blocks of an axis reduction with m results.
func AxisGrid(m int) int { return max(1, min(m, 65535)) }

// RunMapReduceAxis runs an axis reduction of a rows×cols array on the
// CPU into out (m elements of the program's out dtype); args are the
// function's arguments as Run takes them (arrays flat).
func RunMapReduceAxis(p *Program, rows, cols, axis int, out HostArray, args []any) error {
	m, length, ostride, kstride := AxisLayout(rows, cols, axis)
	if m == 0 {
		return nil
	}
	if length == 0 && len(p.Funcs) > 0 {
		return errors.New("jit: a reduction by a function of no elements: the function has no identity to return")
	}
	g := AxisGrid(m)
	vals := []any{out, float64(m), float64(length), float64(ostride), float64(kstride), float64(g)}
	return Run(p, [3]int{g, 1, 1}, [3]int{ReduceBlock, 1, 1}, append(vals, args...))
}
