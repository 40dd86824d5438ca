package jit

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/gluaproject/glua/device"
)

// ReduceBlock is the block of both of kernels.map_reduce's kernels: the
// tree in shared memory has this many leaves.
const ReduceBlock = 256

// ReduceMaxBlocks bounds the first kernel's grid, so that one block of
// the second kernel reduces the partials in a few steps per thread. A
// grid of several waves of blocks kept arrays of 2^28 float16s, bfloat16s
// and uint8s at 0.92–0.97 of kernels.sum's rate on an H200, where 1024
// blocks, one wave, held them to 0.78–0.89.
const ReduceMaxBlocks = 4096

// reduceMaxBlocks is ReduceMaxBlocks, which tests lower to pass the grid
// with few elements.
var reduceMaxBlocks = ReduceMaxBlocks

// ReduceChunk is the number of elements a thread of the first kernel
// takes at a time when every array's elements are 4 bytes or more,
// ReduceBlock apart: a block takes ReduceChunk·ReduceBlock consecutive
// elements at a time, each load instruction of a warp reads 32
// consecutive elements, and a thread's loads are independent of one
// another, so it has them all in flight at once. One element a thread at
// a time kept too few bytes in flight (0.55 of kernels.sum's rate on an
// H200); runs of four consecutive elements a thread read each cache line
// in four loads (float32 at 0.73).
const ReduceChunk = 8

// ReduceRuns is how the first kernel of a map_reduce lays its elements
// out. Each thread takes Groups groups of Lanes consecutive elements at a
// time, the groups Lanes·ReduceBlock elements apart, so that each load
// instruction of a warp reads consecutive memory and a thread has all its
// loads in flight at once; a block takes Groups·Lanes·ReduceBlock
// consecutive elements at a time.
//
// Arrays of 4-byte elements and wider take ReduceChunk single elements.
// Where an array has 1- or 2-byte elements, a group is 16 bytes of the
// narrowest and a thread takes narrowGroups of them, which the CUDA C
// loads as 16-byte vectors when every array is 16-byte aligned. One
// element a load held float16 sums to 0.68–0.72 of kernels.sum's rate and
// uint8 to 0.52 on an H200; one group of 16 bytes a thread, to 0.66 and
// 0.79, too few bytes in flight; eight groups, to 0.93–0.97 and
// 0.92–0.94.
type ReduceRuns struct {
	Lanes, Groups int
	// Whole is the If that takes a whole run of groups of several lanes:
	// Then is, for each element in order, Index set to Start plus the
	// element's offset and then Element, which loads Inputs at Index.
	// Nil where Lanes is 1.
	Whole   *If
	Start   Expr
	Index   int
	Inputs  []*Array
	Element []Stmt
}

// narrowGroups is the groups of 16 bytes a thread takes at a time from
// arrays of 1- and 2-byte elements.
const narrowGroups = 8

// reduceRuns is the layout for the arrays of sig.
func reduceRuns(sig Signature) *ReduceRuns {
	narrowest := narrowestElement(sig)
	if narrowest >= 4 {
		return &ReduceRuns{Lanes: 1, Groups: ReduceChunk}
	}
	return &ReduceRuns{Lanes: 16 / narrowest, Groups: narrowGroups}
}

// narrowestElement is the size of the smallest element among sig's
// arrays, 8 when it has none.
func narrowestElement(sig Signature) int {
	n := 8
	for _, a := range sig {
		if a.Array {
			n = min(n, a.DType.Size())
		}
	}
	return n
}

// perBlock is how many consecutive elements a block takes at a time.
func (r *ReduceRuns) perBlock() int { return r.Groups * r.Lanes * ReduceBlock }

// offset is the place of element j of group g in a thread's run.
func (r *ReduceRuns) offset(g, j int) int64 { return int64(g*r.Lanes*ReduceBlock + j) }

// reduceOps are the named ops of kernels.map_reduce.
var reduceOps = map[string]bool{"sum": true, "prod": true, "max": true, "min": true}

// IsReduceOp reports whether op is one of kernels.map_reduce's named ops.
func IsReduceOp(op string) bool { return reduceOps[op] }

// Reduction is kernels.map_reduce's op: Name, one of "sum", "prod", "max"
// and "min", or Fn, a function of two values (from ParseMap), which
// combines an accumulator with a value (or two partial results) and
// returns the combination. Fn's identity is not known, so a reduction by
// Fn never starts from one: each thread's accumulator starts as its first
// value, and a thread with no values takes no part in the tree.
type Reduction struct {
	Name string
	Fn   *Function
}

// String is the op as messages and cache keys name it.
func (r Reduction) String() string {
	if r.Fn != nil {
		return fmt.Sprintf("function at %s:%d", r.Fn.Chunk, r.Fn.Line())
	}
	return r.Name
}

// check reports an op that is neither a named op nor a function of two
// values.
func (r Reduction) check() error {
	if r.Fn == nil {
		if !reduceOps[r.Name] {
			return fmt.Errorf("jit: unknown reduction %q (sum, prod, max or min)", r.Name)
		}
		return nil
	}
	if n := len(r.Fn.Params); n != 2 {
		return &Error{Chunk: r.Fn.Chunk, Line: r.Fn.Line(), Msg: fmt.Sprintf("the op function takes two values (an accumulator and a value) and returns their combination; it takes %d", n)}
	}
	return nil
}

// reducer combines values of type t by a named op or by a typed Func.
type reducer struct {
	name string
	fn   *Func
	t    Type
}

func (r reducer) combine(x, y Expr) Expr {
	if r.fn != nil {
		return &Call{Fn: r.fn, Args: []Expr{x, y}}
	}
	return combine(r.name, x, y, r.t)
}

// accumulate is the statement that takes x into the accumulator: acc =
// op(acc, x), or, with a function op (no identity), acc = x when first
// is true (the thread's first value); a nil first is never true.
func (r reducer) accumulate(accSlot int, x Expr, first Expr) Stmt {
	get := &LocalGet{Slot: accSlot, T: r.t}
	add := &Set{Slot: accSlot, X: r.combine(get, x)}
	if r.fn == nil || first == nil {
		return add
	}
	return &If{Cond: first, Then: []Stmt{&Set{Slot: accSlot, X: x}}, Else: []Stmt{add}}
}

// start is the accumulator's value before the first element: op's
// identity; a function op has none and sets nothing (accumulate seeds
// it).
func (r reducer) start(accSlot int) []Stmt {
	if r.fn != nil {
		return nil
	}
	return []Stmt{&Set{Slot: accSlot, X: identity(r.name, r.t)}}
}

// CheckMapReduce types a map function (from ParseMap) for sig and wraps
// it in the first kernel of a two-stage reduction by op. Its parameters
// are the partials (one per block, float64 when the values are floats,
// int64 when they are integers and op keeps them integers), n (the
// number of elements, an integer) and then one per Arg as in CheckMap.
// With the layout L = reduceRuns(sig) (the program's Runs), thread t of
// block b (both from 1) takes, into an accumulator, the elements c + o
// (those up to n) for each offset o = L.offset(g, j), groups g and lanes
// j in order, where c = (b - 1)·L.perBlock() + (t - 1)·L.Lanes + 1; then
// the same from c + L.perBlock()·(number of blocks), and so on. The
// block's accumulators are then combined as a tree in
// shared memory in a fixed order (lane j with lane j + w, for w = 128,
// 64, ..., 1), and lane 1 writes the block's partial. ReducePartials is
// the second kernel. For a given grid the result is the same every run,
// and the same on the CPU evaluator.
//
// With a function op, a thread's accumulator starts as its first value
// and the tree combines lane j with lane j + w only where lane j + w had
// a value; every block has at least one element (ReduceGrid), so every
// partial is a value. The function's parameters take the accumulator's
// type; when it returns a float for integer values, the values combine
// as float64.
func CheckMapReduce(f *Function, sig Signature, op Reduction, o Options) (*Program, error) {
	name, err := reduceEntry(f, sig, op, o, "glua_map_")
	if err != nil {
		return nil, err
	}
	full := append(Signature{{Array: true, DType: device.Float64, Rank: 1}, {}}, sig...)
	t := &typer{parser: parser{chunk: f.Chunk, mapFn: true}, prog: &Program{
		Name: name, Chunk: f.Chunk, Line: f.Line(), Signature: full, UsesSync: true,
	}}
	t.defaultFloat = defaultFloat(sig)
	t.what = mapWhat(f)
	err = t.catch(func() {
		partials := &Array{Name: "partials", Rank: 1, Param: 0, Shared: -1}
		t.names = []map[string]binding{{}}
		nSlot := t.newLocal("n", Int)
		t.prog.Params = []Param{{Name: "partials", Array: partials, Slot: -1}, {Name: "n", Slot: nSlot}}
		i := t.newLocal("i", Int)
		index := []Expr{&LocalGet{Slot: i, T: Int}}
		before, loads := t.mapElements(f, sig, index)
		stmts, x, _ := t.mapValue(f, Void)
		r := t.reducer(op, x.Type())
		partials.DType = accDType(r.t)
		t.prog.Signature[0].DType = partials.DType
		accSlot := t.newLocal("acc", r.t)
		cSlot := t.newLocal("c", Int)
		n := &LocalGet{Slot: nSlot, T: Int}
		c := &LocalGet{Slot: cSlot, T: Int}
		runs := reduceRuns(sig)
		t.prog.Runs = runs
		lanes := int64(runs.Lanes)
		// runStart is the first element of the thread w lanes on.
		runStart := func(w int64) Expr {
			block := &Arith{Op: "*", X: &Arith{Op: "-", X: &Block{Axis: 0}, Y: &Const{T: Int, I: 1}, T: Int}, Y: &Const{T: Int, I: int64(runs.perBlock())}, T: Int}
			var lane Expr = &Arith{Op: "+", X: &Thread{Axis: 0}, Y: &Const{T: Int, I: w}, T: Int}
			if lanes > 1 {
				lane = &Arith{Op: "+", X: &Arith{Op: "*", X: &Arith{Op: "-", X: lane, Y: &Const{T: Int, I: 1}, T: Int}, Y: &Const{T: Int, I: lanes}, T: Int}, Y: &Const{T: Int, I: 1}, T: Int}
			}
			return &Arith{Op: "+", X: block, Y: lane, T: Int}
		}
		plus := func(x Expr, k int64) Expr { return &Arith{Op: "+", X: x, Y: &Const{T: Int, I: k}, T: Int} }
		element := slices.Concat(loads, stmts, []Stmt{r.accumulate(accSlot, t.to(x, r.t), &Compare{Op: "==", X: index[0], Y: runStart(0)})})
		// A whole run is its elements one after another, so that their
		// loads can be issued together; the last, shorter run is a loop.
		var whole []Stmt
		for g := range runs.Groups {
			for j := range runs.Lanes {
				whole = append(whole, &Set{Slot: i, X: plus(c, runs.offset(g, j))})
				whole = append(whole, element...)
			}
		}
		groupGap := &Const{T: Int, I: lanes * ReduceBlock}
		var rest Stmt = &For{Slot: i, Start: c, Stop: n, Step: groupGap, Body: element}
		if lanes > 1 {
			// each group's lanes up to n
			g := &LocalGet{Slot: t.newLocal("g", Int), T: Int}
			last := &Math{Fn: "min", Args: []Expr{plus(g, lanes-1), n}, T: Int}
			rest = &For{Slot: g.Slot, Start: c, Stop: n, Step: groupGap, Body: []Stmt{
				&For{Slot: i, Start: g, Stop: last, Step: &Const{T: Int, I: 1}, Body: element}}}
		}
		run := &If{Cond: &Compare{Op: "<=", X: plus(c, runs.offset(runs.Groups-1, runs.Lanes-1)), Y: n}, Then: whole, Else: []Stmt{rest}}
		if lanes > 1 {
			runs.Whole, runs.Start, runs.Index, runs.Element, runs.Inputs = run, c, i, element, t.prog.inputArrays()
		}
		step := &Arith{Op: "*", X: &GridDim{Axis: 0}, Y: &Const{T: Int, I: int64(runs.perBlock())}, T: Int}
		loop := &For{Slot: cSlot, Start: runStart(0), Stop: n, Step: step, Body: []Stmt{run}}
		var has func(w int64) Expr
		if r.fn != nil {
			// lane j + w has a value when its first element is one of
			// the n
			has = func(w int64) Expr { return &Compare{Op: "<=", X: runStart(w), Y: n} }
		}
		t.prog.Body = append(append(append(before, r.start(accSlot)...), loop), treeReduce(t.prog, r, accSlot, partials, has)...)
	})
	if err != nil {
		return nil, err
	}
	return t.prog, nil
}

// reducer types op for values of type value: floats combine in float64,
// integers in int64 unless a function op returns a float for them.
func (t *typer) reducer(op Reduction, value Type) reducer {
	acc := Float64
	if value == Int {
		acc = Int
	}
	if op.Fn == nil {
		return reducer{name: op.Name, t: acc}
	}
	fn, ret, traps := t.opFunc(op.Fn, acc)
	if acc == Int && ret.IsFloat() {
		acc = Float64
		fn, _, traps = t.opFunc(op.Fn, acc)
	}
	t.prog.Funcs = append(t.prog.Funcs, fn)
	t.prog.Traps = traps
	return reducer{fn: fn, t: acc}
}

// opFunc types a function op with both parameters of type acc, as a Func
// of its own locals returning acc, and the type of the value it
// computes; a float literal in it is a float64 when acc is. Its traps
// are numbered after the program's: traps is the program's with them.
func (t *typer) opFunc(op *Function, acc Type) (fn *Func, ret Type, traps []*Error) {
	sub := &typer{parser: parser{chunk: op.Chunk, mapFn: true}, prog: &Program{Name: t.prog.Name, Chunk: op.Chunk, Line: op.Line()}}
	sub.prog.Traps = slices.Clone(t.prog.Traps)
	sub.what = fmt.Sprintf("the op function at %s:%d", op.Chunk, op.Line())
	sub.defaultFloat = t.defaultFloat
	if acc.IsFloat() {
		sub.defaultFloat = acc
	}
	sub.names = []map[string]binding{{}}
	params := make([]int, len(op.Params))
	for i, pname := range op.Params {
		params[i] = sub.newLocal(pname, acc)
		sub.bind(pname, binding{slot: params[i]})
	}
	body, x, _ := sub.mapValue(op, acc)
	return &Func{Name: t.prog.Name + "_op", Params: params, Locals: sub.prog.Locals, Body: body, Ret: sub.to(x, acc)}, x.Type(), sub.prog.Traps
}

// ReducePartials is the second kernel of a map_reduce whose first is
// first: one block of ReduceBlock threads; thread j combines partials j,
// j + ReduceBlock, ... in order, then the block's tree as in the first,
// and thread 1 writes the result into result[1]. Its parameters are
// result and partials, both of the first kernel's partials' dtype. A
// function op is the first kernel's Func; thread j takes part in the
// tree only if there is a partial j.
func ReducePartials(first *Program, op Reduction) *Program {
	d := first.Params[0].Array.DType
	acc := computeType(d)
	result := &Array{Name: "result", DType: d, Rank: 1, Param: 0, Shared: -1}
	partials := &Array{Name: "partials", DType: d, Rank: 1, Param: 1, Shared: -1}
	p := &Program{
		Name: first.Name + "_partials", Chunk: first.Chunk, Line: first.Line, UsesSync: true,
		Traps:     first.Traps, // its Func's, numbered as in first
		Signature: Signature{{Array: true, DType: d, Rank: 1}, {Array: true, DType: d, Rank: 1}},
		Params:    []Param{{Name: "result", Array: result, Slot: -1}, {Name: "partials", Array: partials, Slot: -1}},
		Locals:    []Local{{Name: "i", Type: Int}, {Name: "acc", Type: acc}},
	}
	r := reducer{name: op.Name, t: acc}
	var has func(w int64) Expr
	if op.Fn != nil {
		r.fn = first.Funcs[0]
		p.Funcs = []*Func{r.fn}
		has = func(w int64) Expr {
			return &Compare{Op: "<=", X: &Arith{Op: "+", X: &Thread{Axis: 0}, Y: &Const{T: Int, I: w}, T: Int}, Y: &Size{Arr: partials}}
		}
	}
	i := &LocalGet{Slot: 0, T: Int}
	load := &Load{Arr: partials, Index: []Expr{i}, Line: first.Line}
	loop := &For{Slot: 0, Start: &Thread{Axis: 0}, Stop: &Size{Arr: partials}, Step: &Const{T: Int, I: ReduceBlock},
		Body: []Stmt{r.accumulate(1, load, &Compare{Op: "==", X: i, Y: &Thread{Axis: 0}})}}
	p.Body = append(append(r.start(1), loop), treeReduce(p, r, 1, result, has)...)
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
// block's index. When has is not nil, lane j combines with lane j + w only
// where has(w) holds: that lane held a value (the lanes with values are a
// prefix of the block, so after each step they still are).
func treeReduce(p *Program, r reducer, accSlot int, dst *Array, has func(w int64) Expr) []Stmt {
	acc := p.Locals[accSlot].Type
	s := &Array{Name: "tree", DType: accDType(acc), Rank: 1, Param: -1, Shared: len(p.Shared), Size: ReduceBlock, Shape: []int{ReduceBlock}}
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
		sum := r.combine(&Load{Arr: s, Index: at(0), Line: p.Line}, &Load{Arr: s, Index: at(w), Line: p.Line})
		var cond Expr = &Compare{Op: "<=", X: lane, Y: &Const{T: Int, I: w}}
		if has != nil {
			cond = &Logic{Op: "and", X: cond, Y: has(w)}
		}
		out = append(out,
			&If{Cond: cond, Then: []Stmt{&Store{Arr: s, Index: at(0), X: sum, Line: p.Line}}},
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
	if t != Int {
		// NumPy's max and min, not Lua's math.max and math.min: a NaN
		// in either wins, so the result of any order is NaN where an
		// element is. Lua's would drop a NaN behind the start, -inf.
		switch op {
		case "max":
			op = "maximum"
		case "min":
			op = "minimum"
		}
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

// ReduceGrid is the number of blocks of first, a map_reduce's first
// kernel, for n elements; both backends use it, so that they combine the
// elements in the same order.
func ReduceGrid(first *Program, n int) int {
	perBlock := first.Runs.perBlock()
	return max(1, min((n+perBlock-1)/perBlock, reduceMaxBlocks))
}

// RunMapReduce runs both kernels of a map_reduce over n elements on the
// CPU; args are the function's arguments as Run takes them (arrays flat,
// of n elements).
func RunMapReduce(first, second *Program, n int, args []any) (float64, error) {
	if n == 0 && len(first.Funcs) > 0 {
		return 0, errors.New("jit: a reduction by a function of no elements: the function has no identity to return")
	}
	d := first.Params[0].Array.DType
	g := ReduceGrid(first, n)
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

// reduceEntry checks a reduction's op and the map function's arity, and
// names the kernel: o.Name, or prefix and the op ("fn" for a function).
func reduceEntry(f *Function, sig Signature, op Reduction, o Options, prefix string) (string, error) {
	if err := op.check(); err != nil {
		return "", err
	}
	if len(sig) != len(f.Params) {
		return "", &Error{Chunk: f.Chunk, Line: f.Line(), Msg: fmt.Sprintf("the map function takes %d arguments, got %d", len(f.Params), len(sig))}
	}
	if o.Name != "" {
		return o.Name, nil
	}
	if op.Fn != nil {
		return prefix + "fn", nil
	}
	return prefix + op.Name, nil
}
