package jit

import (
	"fmt"
	"math"

	"github.com/gluaproject/glua/device"
)

// ReduceBlock is the block of both of kernels.map_reduce's kernels: the
// tree in shared memory has this many leaves.
const ReduceBlock = 256

// ReduceMaxBlocks bounds the first kernel's grid, so that one block of
// the second kernel reduces the partials in a few steps per thread.
const ReduceMaxBlocks = 1024

// ReduceOps are the ops of kernels.map_reduce.
var reduceOps = map[string]bool{"sum": true, "prod": true, "max": true, "min": true}

// IsReduceOp reports whether op is one of kernels.map_reduce's ops.
func IsReduceOp(op string) bool { return reduceOps[op] }

// CheckMapReduce types a map function (from ParseMap) for sig and wraps
// it in the first kernel of a two-stage reduction by op. Its parameters
// are the partials (one per block, float64 when the function's value is
// a float, int64 when it is an integer), n (the number of elements, an
// integer) and then one per Arg as in CheckMap. Each thread combines its
// elements i = kernels.grid(1), i + kernels.gridsize(1), ... in that
// order into an accumulator; the block's accumulators are then combined
// as a tree in shared memory in a fixed order (lane j with lane j + w,
// for w = 128, 64, ..., 1), and lane 1 writes the block's partial.
// ReducePartials is the second kernel. For a given grid the result is
// the same every run, and the same on the CPU evaluator.
func CheckMapReduce(f *Function, sig Signature, op string, o Options) (*Program, error) {
	if !reduceOps[op] {
		return nil, fmt.Errorf("jit: unknown reduction %q (sum, prod, max or min)", op)
	}
	if len(sig) != len(f.Params) {
		return nil, &Error{Chunk: f.Chunk, Line: f.Line(), Msg: fmt.Sprintf("the map function takes %d arguments, got %d", len(f.Params), len(sig))}
	}
	name := o.Name
	if name == "" {
		name = "glua_map_" + op
	}
	full := append(Signature{{Array: true, DType: device.Float64, Rank: 1}, {}}, sig...)
	t := &typer{parser: parser{chunk: f.Chunk, mapFn: true}, prog: &Program{
		Name: name, Chunk: f.Chunk, Line: f.Line(), Signature: full, UsesSync: true,
	}}
	t.defaultFloat = defaultFloat(sig)
	err := t.catch(func() {
		partials := &Array{Name: "partials", Rank: 1, Param: 0, Shared: -1}
		t.names = []map[string]binding{{}}
		nSlot := t.newLocal("n", Int)
		t.prog.Params = []Param{{Name: "partials", Array: partials, Slot: -1}, {Name: "n", Slot: nSlot}}
		i := t.newLocal("i", Int)
		index := []Expr{&LocalGet{Slot: i, T: Int}}
		before, body := t.mapElements(f, sig, index)
		stmts, x, _ := t.mapValue(f, Void)
		acc := Float64
		if x.Type() == Int {
			acc = Int
		}
		partials.DType = accDType(acc)
		t.prog.Signature[0].DType = partials.DType
		accSlot := t.newLocal("acc", acc)
		get := &LocalGet{Slot: accSlot, T: acc}
		body = append(append(body, stmts...), &Set{Slot: accSlot, X: combine(op, get, t.to(x, acc), acc)})
		loop := &For{Slot: i, Start: &Grid{Axis: 0}, Stop: &LocalGet{Slot: nSlot, T: Int}, Step: &GridSize{Axis: 0}, Body: body}
		t.prog.Body = append(append(before, &Set{Slot: accSlot, X: identity(op, acc)}, loop), treeReduce(t.prog, op, accSlot, partials)...)
	})
	if err != nil {
		return nil, err
	}
	return t.prog, nil
}

// ReducePartials is the second kernel of a map_reduce whose first is
// first: one block of ReduceBlock threads; thread j combines partials j,
// j + ReduceBlock, ... in order, then the block's tree as in the first,
// and thread 1 writes the result into result[1]. Its parameters are
// result and partials, both of the first kernel's partials' dtype.
func ReducePartials(first *Program, op string) *Program {
	d := first.Params[0].Array.DType
	acc := computeType(d)
	result := &Array{Name: "result", DType: d, Rank: 1, Param: 0, Shared: -1}
	partials := &Array{Name: "partials", DType: d, Rank: 1, Param: 1, Shared: -1}
	p := &Program{
		Name: first.Name + "_partials", Chunk: first.Chunk, Line: first.Line, UsesSync: true,
		Signature: Signature{{Array: true, DType: d, Rank: 1}, {Array: true, DType: d, Rank: 1}},
		Params:    []Param{{Name: "result", Array: result, Slot: -1}, {Name: "partials", Array: partials, Slot: -1}},
		Locals:    []Local{{Name: "i", Type: Int}, {Name: "acc", Type: acc}},
	}
	get := &LocalGet{Slot: 1, T: acc}
	load := &Load{Arr: partials, Index: []Expr{&LocalGet{Slot: 0, T: Int}}, Line: first.Line}
	loop := &For{Slot: 0, Start: &Thread{Axis: 0}, Stop: &Size{Arr: partials}, Step: &Const{T: Int, I: ReduceBlock},
		Body: []Stmt{&Set{Slot: 1, X: combine(op, get, load, acc)}}}
	p.Body = append([]Stmt{&Set{Slot: 1, X: identity(op, acc)}, loop}, treeReduce(p, op, 1, result)...)
	return p
}

func accDType(t Type) device.DType {
	if t == Int {
		return device.Int64
	}
	return device.Float64
}

// treeReduce stores each thread's accumulator in a shared array, combines
// lane j with lane j + w for w = ReduceBlock/2, ..., 1 (a barrier after
// each step), and has lane 1 store the block's value into dst at the
// block's index.
func treeReduce(p *Program, op string, accSlot int, dst *Array) []Stmt {
	acc := p.Locals[accSlot].Type
	s := &Array{Name: "tree", DType: accDType(acc), Rank: 1, Param: -1, Shared: len(p.Shared), Size: ReduceBlock}
	p.Shared = append(p.Shared, s)
	p.Locals = append(p.Locals, Local{Name: "lane", Type: Int})
	lane := &LocalGet{Slot: len(p.Locals) - 1, T: Int}
	at := func(k int64) []Expr {
		if k == 0 {
			return []Expr{lane}
		}
		return []Expr{&Arith{Op: "+", X: lane, Y: &Const{T: Int, I: k}, T: Int}}
	}
	out := []Stmt{
		&Set{Slot: lane.Slot, X: &Thread{Axis: 0}},
		&Store{Arr: s, Index: at(0), X: &LocalGet{Slot: accSlot, T: acc}, Line: p.Line},
		&SyncThreads{},
	}
	for w := int64(ReduceBlock / 2); w >= 1; w /= 2 {
		sum := combine(op, &Load{Arr: s, Index: at(0), Line: p.Line}, &Load{Arr: s, Index: at(w), Line: p.Line}, acc)
		out = append(out,
			&If{Cond: &Compare{Op: "<=", X: lane, Y: &Const{T: Int, I: w}}, Then: []Stmt{&Store{Arr: s, Index: at(0), X: sum, Line: p.Line}}},
			&SyncThreads{})
	}
	write := &Store{Arr: dst, Index: []Expr{&Block{Axis: 0}}, X: &Load{Arr: s, Index: []Expr{&Const{T: Int, I: 1}}, Line: p.Line}, Line: p.Line}
	return append(out, &If{Cond: &Compare{Op: "==", X: lane, Y: &Const{T: Int, I: 1}}, Then: []Stmt{write}})
}

// combine is op applied to x and y of type t.
func combine(op string, x, y Expr, t Type) Expr {
	switch op {
	case "sum":
		return &Arith{Op: "+", X: x, Y: y, T: t}
	case "prod":
		return &Arith{Op: "*", X: x, Y: y, T: t}
	}
	return &Math{Fn: op, Args: []Expr{x, y}, T: t}
}

// identity is op's neutral value: what a thread with no elements holds.
func identity(op string, t Type) Expr {
	var i int64
	var f float64
	switch op {
	case "prod":
		i, f = 1, 1
	case "max":
		i, f = math.MinInt64, math.Inf(-1)
	case "min":
		i, f = math.MaxInt64, math.Inf(1)
	}
	if t == Int {
		return &Const{T: Int, I: i}
	}
	return &Const{T: t, F: f}
}

// ReduceGrid is the first kernel's number of blocks for n elements; both
// backends use it, so that they combine the elements in the same order.
func ReduceGrid(n int) int { return max(1, min((n+ReduceBlock-1)/ReduceBlock, ReduceMaxBlocks)) }

// RunMapReduce runs both kernels of a map_reduce over n elements on the
// CPU; args are the function's arguments as Run takes them (arrays flat,
// of n elements).
func RunMapReduce(first, second *Program, n int, args []any) (float64, error) {
	d := first.Params[0].Array.DType
	g := ReduceGrid(n)
	partials := HostArray{DType: d, Shape: []int{g}, Data: make([]byte, g*d.Size())}
	if err := Run(first, [3]int{g, 1, 1}, [3]int{ReduceBlock, 1, 1}, append([]any{partials, float64(n)}, args...)); err != nil {
		return 0, err
	}
	result := HostArray{DType: d, Shape: []int{1}, Data: make([]byte, d.Size())}
	if err := Run(second, [3]int{1, 1, 1}, [3]int{ReduceBlock, 1, 1}, []any{result, partials}); err != nil {
		return 0, err
	}
	f, i := load(d, result.Data, 0)
	if d == device.Int64 {
		return float64(i), nil
	}
	return f, nil
}
