package jit

import (
	"errors"
	"slices"

	"github.com/gluaproject/glua/device"
)

// AxisParams are the number parameters of an axis reduction's first
// kernel after dst, in order: the number of results, the number of values
// combined into each, the flat distance between consecutive results'
// first elements and between consecutive values of one result, the
// number of segments each result's values are cut into, and a segment's
// length (AxisPlan).
var AxisParams = []string{"m", "len", "ostride", "kstride", "segments", "seglen"}

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

// axisChunk and axisChunkOuter are the most values a thread of the
// inner and the outer form takes at a time (AxisForm.Run), their loads
// independent of one another so that they are in flight together.
const (
	axisChunk      = 8
	axisChunkOuter = 16
)

// axisWarps is the number of warps of an inner axis reduction's block.
const axisWarps = ReduceBlock / WarpSize

// CheckMapReduceAxis types a map function (from ParseMap) for sig and
// wraps it in the first kernel of a reduction along an axis: result o
// (1-based, o = 1..m) combines, by op, the values at flat elements
// (o-1)*ostride + (k-1)*kstride + 1 for k = 1..len. The values of a
// result are cut into segments of seglen consecutive k (the last
// shorter); the kernel combines each segment into dst[(s-1)*m + o], s the
// segment (1-based), converted to dst's dtype as a store converts. With
// one segment dst is the result; with more, the partials that
// AxisPartials combines. Its parameters are dst (1-D, of dtype dst), then
// AxisParams, then one per Arg as in CheckMap (arrays read flat).
//
// Inner (for kstride 1: the values of a result lie together) takes a
// warp per segment, blocks of 32×8 threads: lane j combines the segment's
// values j, j + 32, ... in that order, and the warp's lanes combine as a
// tree by shuffles (lane j with lane j + w, w = 16, 8, ..., 1). Otherwise
// a thread takes a segment, blocks of 256 threads along the results, and
// combines its values in order: neighbouring threads read neighbouring
// elements either way. The order depends only on the shape (AxisPlan),
// never on the grid or on timing: the result is the same on every run and
// on the CPU evaluator. Named ops start from their identity; a function
// op from each lane's first value, with lanes past the segment taking no
// part (len must not be 0).
//
// The form (from the plan) says which of the two, and how much a thread
// takes at a time. The outer form's thread takes Width neighbouring
// results (o, o + 1, ...), each combined in the order above into its own
// accumulator. The inner form's lane j takes Width neighbouring values of
// its result: the segment's values (j-1)·Width + 1 to j·Width, then those
// 32·Width further on, and so on, combined in that order. A thread takes
// Run of its values (of Width elements) at once where the segment has
// them. Where the layout keeps the elements a thread takes at once
// together and aligned, and every array is aligned, the CUDA C loads them
// at once (AxisGroups).
func CheckMapReduceAxis(f *Function, sig Signature, op Reduction, dst device.DType, form AxisForm, o Options) (*Program, error) {
	inner, width, chunk := form.Inner, max(1, form.Width), max(1, form.Run)
	name, err := reduceEntry(f, sig, op, o, "glua_map_axis_")
	if err != nil {
		return nil, err
	}
	full := Signature{{Array: true, DType: dst, Rank: 1}}
	for range AxisParams {
		full = append(full, Arg{})
	}
	full = append(full, sig...)
	t := &typer{parser: parser{chunk: f.Chunk, mapFn: true}, prog: &Program{
		Name: name, Chunk: f.Chunk, Line: f.Line(), Signature: full, UsesWarp: inner,
	}}
	t.defaultFloat = defaultFloat(sig)
	t.what = mapWhat(f)
	err = t.catch(func() {
		dstArr := &Array{Name: "dst", DType: dst, Rank: 1, Param: 0, Shared: -1}
		t.names = []map[string]binding{{}}
		t.prog.Params = []Param{{Name: "dst", Array: dstArr, Slot: -1}}
		num := map[string]Expr{}
		for _, pname := range AxisParams {
			slot := t.newLocal(pname, Int)
			t.prog.Params = append(t.prog.Params, Param{Name: pname, Slot: slot})
			num[pname] = &LocalGet{Slot: slot, T: Int}
		}
		local := func(name string) (int, Expr) {
			slot := t.newLocal(name, Int)
			return slot, &LocalGet{Slot: slot, T: Int}
		}
		oSlot, res := local("o")
		sSlot, seg := local("s")
		k0Slot, k0 := local("k0")
		k1Slot, k1 := local("k1")
		cSlot, c := local("c")
		kSlot, k := local("k")
		iSlot, i := local("i")
		before, loads := t.mapElements(f, sig, []Expr{i})
		stmts, x, _ := t.mapValue(f, Void)
		r := t.reducer(op, x.Type())
		accSlot := t.newLocal("acc", r.t)
		one := &Const{T: Int, I: 1}
		num1 := func(v int64) Expr { return &Const{T: Int, I: v} }
		add := func(a, b Expr) Expr { return &Arith{Op: "+", X: a, Y: b, T: Int} }
		sub := func(a, b Expr) Expr { return &Arith{Op: "-", X: a, Y: b, T: Int} }
		mul := func(a, b Expr) Expr { return &Arith{Op: "*", X: a, Y: b, T: Int} }
		le := func(a, b Expr) Expr { return &Compare{Op: "<=", X: a, Y: b} }

		// lane is the thread's lane in its warp (inner), its first value
		// k0 + (lane - 1)·span; a thread of the outer form starts at k0.
		// The outer form's thread takes columns results, the inner form's
		// lane span values at a time.
		columns, span := width, 1
		var lane Expr = one
		stride := int64(1)
		if inner {
			columns, span = 1, width
			lane, stride = &Thread{Axis: 0}, WarpSize*int64(span)
		}
		var first Expr = add(k0, sub(lane, one))
		if span > 1 {
			first = add(k0, mul(sub(lane, one), num1(int64(span))))
		}
		accSlots := []int{accSlot}
		for range columns - 1 {
			accSlots = append(accSlots, t.newLocal("acc", r.t))
		}
		// result o + p: i = (o+p-1)*ostride + (k+q-1)*kstride + 1 for the
		// thread's value k + q
		column := func(p int) Expr {
			if p == 0 {
				return res
			}
			return add(res, num1(int64(p)))
		}
		value := func(q int) Expr {
			if q == 0 {
				return k
			}
			return add(k, num1(int64(q)))
		}
		flatAt := func(p, q int) Expr {
			return add(add(mul(sub(column(p), one), num["ostride"]), mul(sub(value(q), one), num["kstride"])), one)
		}
		// the elements the thread takes at k: a value of each of its
		// results (outer), or span values of its result (inner)
		elements := make([][]Stmt, max(columns, span))
		for p := range elements {
			col, q, isFirst := p, 0, Expr(&Compare{Op: "==", X: k, Y: first})
			if inner {
				col, q = 0, p
				if q > 0 {
					isFirst = nil // a lane's first value starts a span
				}
			}
			elements[p] = slices.Concat([]Stmt{&Set{Slot: iSlot, X: flatAt(col, q)}}, loads, stmts,
				[]Stmt{r.accumulate(accSlots[col], t.to(x, r.t), isFirst)})
		}
		// those there are: the outer form's results up to m, the inner
		// form's values up to k1
		values := slices.Clone(elements[0])
		for p := 1; p < len(elements); p++ {
			there := le(column(p), num["m"])
			if inner {
				there = le(value(p), k1)
			}
			values = append(values, &If{Cond: there, Then: elements[p]})
		}
		// a run of chunk values, stride apart, one after another so that
		// their loads issue together; the last, shorter run is a loop. In
		// a whole run the inner form's values are all there.
		each := values
		if inner {
			each = slices.Concat(elements...)
		}
		var whole []Stmt
		for j := range int64(chunk) {
			whole = append(whole, &Set{Slot: kSlot, X: add(c, num1(j*stride))})
			whole = append(whole, each...)
		}
		last := add(c, num1(int64(chunk-1)*stride))
		if span > 1 {
			last = add(last, num1(int64(span-1)))
		}
		runs := &If{Cond: le(last, k1), Then: whole,
			Else: []Stmt{&For{Slot: kSlot, Start: c, Stop: k1, Step: num1(stride), Body: values}}}
		if width > 1 {
			t.prog.AxisGroups = &AxisGroups{Whole: runs, Width: width, Inner: inner, Rows: chunk, Step: stride, K: kSlot, C: c,
				Elements: elements, Base: flatAt(0, 0), O: res, M: num["m"], OStride: num["ostride"], KStride: num["kstride"],
				Start: add(add(mul(sub(res, one), num["ostride"]), mul(sub(c, one), num["kstride"])), one), Inputs: t.prog.inputArrays()}
		}
		segment := slices.Concat(
			[]Stmt{
				&Set{Slot: k0Slot, X: add(mul(sub(seg, one), num["seglen"]), one)},
				&Set{Slot: k1Slot, X: &Math{Fn: "min", Args: []Expr{mul(seg, num["seglen"]), num["len"]}, T: Int}},
			})
		for _, a := range accSlots {
			segment = append(segment, r.start(a)...)
		}
		segment = append(segment, &For{Slot: cSlot, Start: first, Stop: k1, Step: num1(int64(chunk) * stride), Body: []Stmt{runs}})
		at := func(p int) []Expr { return []Expr{add(mul(sub(seg, one), num["m"]), column(p))} }
		acc := &LocalGet{Slot: accSlot, T: r.t}
		var results *For
		if inner {
			vSlot := t.newLocal("v", r.t)
			// lane j + w's first value is w·span after lane j's
			segment = append(segment, warpTree(r, accSlot, vSlot, lane, func(w int64) Expr { return le(add(first, num1(w*int64(span))), k1) }, f.Line())...)
			segment = append(segment, &If{Cond: &Compare{Op: "==", X: lane, Y: one},
				Then: []Stmt{&Store{Arr: dstArr, Index: at(0), X: acc, Line: f.Line()}}})
			// warps along y take the results, blocks along z the segments
			results = &For{Slot: oSlot, Start: &Grid{Axis: 1}, Stop: num["m"], Step: &GridSize{Axis: 1}, Body: segment}
			results = &For{Slot: sSlot, Start: &Block{Axis: 2}, Stop: num["segments"], Step: &GridDim{Axis: 2}, Body: []Stmt{results}}
		} else {
			segment = append(segment, &Store{Arr: dstArr, Index: at(0), X: acc, Line: f.Line()})
			for p := 1; p < columns; p++ {
				segment = append(segment, &If{Cond: le(column(p), num["m"]), Then: []Stmt{
					&Store{Arr: dstArr, Index: at(p), X: &LocalGet{Slot: accSlots[p], T: r.t}, Line: f.Line()}}})
			}
			// threads along x take the results, columns each, blocks
			// along y the segments
			var start, step Expr = &Grid{Axis: 0}, &GridSize{Axis: 0}
			if columns > 1 {
				start = add(mul(sub(start, one), num1(int64(columns))), one)
				step = mul(step, num1(int64(columns)))
			}
			results = &For{Slot: oSlot, Start: start, Stop: num["m"], Step: step, Body: segment}
			results = &For{Slot: sSlot, Start: &Block{Axis: 1}, Stop: num["segments"], Step: &GridDim{Axis: 1}, Body: []Stmt{results}}
		}
		t.prog.Body = append(before, results)
	})
	if err != nil {
		return nil, err
	}
	return t.prog, nil
}

// AxisPartials is the second kernel of an axis reduction whose first is
// first, cut into segments: a warp per result o, blocks of 32×8 threads
// as the inner form's, lane j combines partials (j-1)·m + o, (j+31)·m +
// o, ... (segments j, j + 32, ... of the result) in that order by op, the
// lanes combine as the inner form's tree, and lane 1 stores the result
// into out[o], converted to out's dtype. first's dst holds the partials,
// of the accumulator's dtype (AccumulatorDType). Its parameters are out,
// partials, m and segments. A function op starts from each lane's first
// partial, lanes past the segments taking no part.
func AxisPartials(first *Program, op Reduction, out device.DType) *Program {
	d := first.Params[0].Array.DType
	acc := computeType(d)
	outArr := &Array{Name: "out", DType: out, Rank: 1, Param: 0, Shared: -1}
	partials := &Array{Name: "partials", DType: d, Rank: 1, Param: 1, Shared: -1}
	p := &Program{
		Name: first.Name + "_partials", Chunk: first.Chunk, Line: first.Line, UsesWarp: true,
		Traps:     first.Traps, // its Func's, numbered as in first
		Signature: Signature{{Array: true, DType: out, Rank: 1}, {Array: true, DType: d, Rank: 1}, {}, {}},
		Params: []Param{{Name: "out", Array: outArr, Slot: -1}, {Name: "partials", Array: partials, Slot: -1},
			{Name: "m", Slot: 0}, {Name: "segments", Slot: 1}},
		Locals: []Local{{Name: "m", Type: Int}, {Name: "segments", Type: Int}, {Name: "o", Type: Int}, {Name: "s", Type: Int},
			{Name: "acc", Type: acc}, {Name: "v", Type: acc}},
	}
	r := reducer{name: op.Name, t: acc}
	if op.Fn != nil {
		r.fn = first.Funcs[0]
		p.Funcs = []*Func{r.fn}
	}
	get := func(slot int) Expr { return &LocalGet{Slot: slot, T: Int} }
	one := &Const{T: Int, I: 1}
	lane := &Thread{Axis: 0}
	at := &Arith{Op: "+", X: &Arith{Op: "*", X: &Arith{Op: "-", X: get(3), Y: one, T: Int}, Y: get(0), T: Int}, Y: get(2), T: Int}
	load := &Load{Arr: partials, Index: []Expr{at}, Line: first.Line}
	body := slices.Concat(r.start(4), []Stmt{&For{Slot: 3, Start: lane, Stop: get(1), Step: &Const{T: Int, I: WarpSize},
		Body: []Stmt{r.accumulate(4, load, &Compare{Op: "==", X: get(3), Y: lane})}}})
	body = append(body, warpTree(r, 4, 5, lane, func(w int64) Expr {
		return &Compare{Op: "<=", X: &Arith{Op: "+", X: lane, Y: &Const{T: Int, I: w}, T: Int}, Y: get(1)}
	}, first.Line)...)
	body = append(body, &If{Cond: &Compare{Op: "==", X: lane, Y: one},
		Then: []Stmt{&Store{Arr: outArr, Index: []Expr{get(2)}, X: &LocalGet{Slot: 4, T: acc}, Line: first.Line}}})
	p.Body = []Stmt{&For{Slot: 2, Start: &Grid{Axis: 1}, Stop: get(0), Step: &GridSize{Axis: 1}, Body: body}}
	return p
}

// warpTree combines the accumulators of a warp's lanes into lane 1's:
// every lane shuffles (into the local vSlot), and lane j <= w combines
// with lane j + w, for w = 16, 8, ..., 1; with a function op only where
// has(w), which says that lane j + w holds a value (the lanes with values
// are a prefix of the warp).
func warpTree(r reducer, accSlot, vSlot int, lane Expr, has func(w int64) Expr, line int) []Stmt {
	acc := &LocalGet{Slot: accSlot, T: r.t}
	var out []Stmt
	for w := int64(WarpSize / 2); w >= 1; w /= 2 {
		var cond Expr = &Compare{Op: "<=", X: lane, Y: &Const{T: Int, I: w}}
		if r.fn != nil {
			cond = &Logic{Op: "and", X: cond, Y: has(w)}
		}
		out = append(out,
			&Set{Slot: vSlot, X: &Shfl{Op: "down", X: acc, By: &Const{T: Int, I: w}, Line: line}},
			&If{Cond: cond, Then: []Stmt{&Set{Slot: accSlot, X: r.combine(acc, &LocalGet{Slot: vSlot, T: r.t})}}})
	}
	return out
}

// AxisGroups is set on an axis reduction's first kernel whose threads
// take several elements at a time (CheckMapReduceAxis, Width > 1): Whole
// is the If that takes a run of Rows values; its Then is, for each
// value, K set to C plus Step times its place in the run, and then
// Elements[p] for each of its Width elements, each loading Inputs at
// index Base + p where the layout keeps them together. The outer form's
// elements are a value of each of the thread's results, together where
// they are all there (O + Width - 1 <= M), OStride is 1 and KStride a
// multiple of Width; the inner form's (Inner) are Width neighbouring
// values of one result, together where KStride is 1 and aligned where
// the run's first element (flat index Start) is a multiple of Width into
// the arrays (its values are a multiple of Width apart). Where
// they are together and every input is aligned for them, the CUDA C
// loads each value's Width elements of an input at once. The inner
// form's lanes then convert float16s by the device's instruction alone
// where none of the run's words holds a NaN: rebuilding NaN payloads on
// every element held float16 sums along rows of 256 13% behind
// PyTorch's speed on an H200.
type AxisGroups struct {
	Whole         *If
	Width, Rows   int
	Inner         bool
	Step          int64
	K             int
	C, Base, O, M Expr
	OStride       Expr
	KStride       Expr
	Start         Expr
	Elements      [][]Stmt
	Inputs        []*Array
}

// AxisWidth is how many elements a thread of an axis reduction takes at
// a time for arrays of sig: 8 bytes of the narrowest array's elements
// (one float64) in the outer form, 4 bytes (one float32) in the inner
// form (inner true). On an H200, with runs of 16 values, 8 bytes took sums
// over the rows of 16384² and 256 × 2^20 from 0.84–0.95 of PyTorch's
// speed (4 bytes, runs of 8) to 0.95–1.00 for float32, float16 and
// bfloat16; a lane of the inner form taking 4 bytes of float16s, not one
// element, took sums along those rows from 0.69–0.80 to 0.98–1.16.
func AxisWidth(sig Signature, inner bool) int {
	bytes := 8
	if inner {
		bytes = 4
	}
	return max(1, bytes/narrowestElement(sig))
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

// AxisPlan is how an axis reduction of a shape runs: its layout, the
// kernel's form (Inner where a result's values lie together), and the
// segments each result's values are cut into, enough that the segments
// keep a GPU's threads busy when there are few results, but each long
// enough that the partials cost little beside the values. It depends on
// the shape only, so both backends combine in the same order.
type AxisPlan struct {
	M, Len, Ostride, Kstride int
	Segments, SegLen         int
	AxisForm
}

// AxisForm is what an axis reduction's first kernel is built for
// (CheckMapReduceAxis); the plan chooses it from the shape.
type AxisForm struct {
	// Inner: a result's values lie together (kstride 1), a warp per
	// segment; otherwise a thread per segment.
	Inner bool
	// Width is how many results a thread of the outer form takes, or
	// neighbouring values a lane of the inner form (AxisWidth). The inner
	// form's segments are then a multiple of it long, so that every
	// segment's values stay aligned as the first's.
	Width int
	// Run is how many of its values (of Width elements) a thread takes at
	// once: axisChunk (axisChunkOuter for the outer form), halved until a
	// thread's whole run fits in a segment, so that short rows are not
	// left to the one-at-a-time loop.
	Run int
}

// The work an axis reduction asks for: about axisThreads threads of the
// outer form, axisWarpsWanted warps of the inner one, segments of at
// least axisMinSeg values for a thread and axisMinSegInner for a warp.
const (
	axisThreads     = 1 << 17
	axisWarpsWanted = 1 << 14
	axisMinSeg      = 64
	axisMinSegInner = 1024
	axisMaxGrid     = 65535 // blocks along y and z
)

// PlanAxis plans the reduction of a rows×cols array along axis, of
// arrays of sig.
func PlanAxis(rows, cols, axis int, sig Signature) AxisPlan {
	m, length, ostride, kstride := AxisLayout(rows, cols, axis)
	inner := kstride == 1 && length > 1
	p := AxisPlan{M: m, Len: length, Ostride: ostride, Kstride: kstride,
		AxisForm: AxisForm{Inner: inner, Width: AxisWidth(sig, inner), Run: axisChunkOuter}}
	if inner {
		p.Run = axisChunk
	}
	want, least := ceilDiv(axisThreads, max(ceilDiv(m, p.Width), 1)), axisMinSeg
	if p.Inner {
		want, least = ceilDiv(axisWarpsWanted, max(m, 1)), axisMinSegInner
	}
	segs := max(1, min(want, length/least, axisMaxGrid))
	p.SegLen = max(1, ceilDiv(length, segs))
	if p.Inner && segs > 1 {
		p.SegLen = ceilDiv(p.SegLen, p.Width) * p.Width
	}
	p.Segments = max(1, ceilDiv(length, p.SegLen)) // none empty
	// a thread's values are step apart
	step := 1
	if p.Inner {
		step = WarpSize * p.Width
	}
	for p.Run > 1 && p.Run*step > p.SegLen {
		p.Run /= 2
	}
	return p
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Launch is the first kernel's grid and block for the plan. The outer
// form's blocks are no wider than a segment's threads, rounded up to
// whole warps, so that few results do not leave most of a block idle.
func (p AxisPlan) Launch() (grid, block [3]int) {
	if p.Inner {
		return [3]int{1, min(ceilDiv(p.M, axisWarps), axisMaxGrid), p.Segments}, [3]int{WarpSize, axisWarps, 1}
	}
	threads := ceilDiv(p.M, p.Width)
	width := min(ReduceBlock, ceilDiv(max(threads, 1), WarpSize)*WarpSize)
	return [3]int{min(ceilDiv(threads, width), axisMaxGrid), p.Segments, 1}, [3]int{width, 1, 1}
}

// PartialsLaunch is the second kernel's grid and block: a warp per
// result.
func (p AxisPlan) PartialsLaunch() (grid, block [3]int) {
	return [3]int{1, min(ceilDiv(p.M, axisWarps), axisMaxGrid), 1}, [3]int{WarpSize, axisWarps, 1}
}

// Values are the first kernel's AxisParams for the plan.
func (p AxisPlan) Values() []any {
	return []any{float64(p.M), float64(p.Len), float64(p.Ostride), float64(p.Kstride), float64(p.Segments), float64(p.SegLen)}
}

// RunMapReduceAxis runs an axis reduction on the CPU into out (m elements
// of second's out dtype, or of first's dst dtype when the plan has one
// segment, when second is not used and may be nil); args are the
// function's arguments as Run takes them (arrays flat).
func RunMapReduceAxis(first, second *Program, plan AxisPlan, out HostArray, args []any) error {
	if plan.M == 0 {
		return nil
	}
	if plan.Len == 0 && len(first.Funcs) > 0 {
		return errors.New("jit: a reduction by a function of no elements: the function has no identity to return")
	}
	dst := out
	if plan.Segments > 1 {
		d := first.Params[0].Array.DType
		dst = HostArray{DType: d, Shape: []int{plan.Segments * plan.M}, Data: make([]byte, plan.Segments*plan.M*d.Size())}
	}
	grid, block := plan.Launch()
	if err := Run(first, grid, block, append(append([]any{dst}, plan.Values()...), args...)); err != nil {
		return err
	}
	if plan.Segments == 1 {
		return nil
	}
	grid, block = plan.PartialsLaunch()
	return Run(second, grid, block, []any{out, dst, float64(plan.M), float64(plan.Segments)})
}
