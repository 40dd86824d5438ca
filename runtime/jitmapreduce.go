package runtime

import (
	"errors"
	"fmt"

	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/jit"
)

// mapReduceVariant is a map_reduce's two kernels for one signature.
type mapReduceVariant struct {
	first, second *jitVariant
}

// ReduceOp is kernels.map_reduce's op: Name, one of "sum", "prod",
// "max" and "min", or Tree, a Lua function of two values in the kernel
// language (jit.ParseMap) from the script Chunk, which combines an
// accumulator with a value and returns the combination.
type ReduceOp struct {
	Name  string
	Tree  *ast.FunctionExpr
	Chunk string
}

func (op ReduceOp) String() string {
	if op.Tree != nil {
		return fmt.Sprintf("the function at %s:%d", op.Chunk, op.Tree.Line())
	}
	return op.Name
}

// MapReduce combines fn(args[1][i], args[2][i], ...) over every element
// i by op and returns the result: fn is a map function as for Map, the
// arrays of one shape, numbers broadcast. Floats combine in float64,
// integers in int64 (in float64 when a function op returns a float for
// them). Two kernels (jit.CheckMapReduce and jit.ReducePartials) whose
// order of combination depends only on the number of elements, so a
// result is the same on every run and, for integers, on every backend.
// A function op has no identity, so it needs at least one element.
func (rt *Runtime) MapReduce(tree *ast.FunctionExpr, chunk string, op ReduceOp, args []any) (float64, error) {
	if err := rt.usable(); err != nil {
		return 0, err
	}
	if err := rt.uncapturable("a reduction to a number"); err != nil {
		return 0, err
	}
	c, err := rt.checkReduce(tree, chunk, op, args, "the number of elements")
	if err != nil {
		return 0, err
	}
	mf, first, firstName, host := c.mf, c.first, c.firstName, c.host
	sig, err := mapSignature(rt, mf, args, first.shape, firstName)
	if err != nil {
		return 0, err
	}
	red, err := rt.reduction(op)
	if err != nil {
		return 0, err
	}
	v, err := rt.mapReduceVariant(mf, sig, op, red)
	if err != nil {
		return 0, err
	}
	if err := rt.recordable(v.first.prog); err != nil {
		return 0, err
	}
	n := first.size
	if err := emptyReduction(op, n, "no elements"); err != nil {
		return 0, err
	}
	if host {
		mem := rt.backend.(HostMemory)
		vals := hostValues(mem, args, n)
		var runErr error
		r, err := rt.hostReduce(func() float64 {
			var r float64
			r, runErr = jit.RunMapReduce(v.first.prog, v.second.prog, n, vals)
			return r
		}, argumentReads(args)...)
		return r, errors.Join(runErr, err)
	}
	return rt.mapReduceOnDevice(v, n, args)
}

// mapReduceOnDevice launches both kernels on the runtime's stream and
// reads the result back; kernels that take an error record share one,
// read back before the result.
func (rt *Runtime) mapReduceOnDevice(v *mapReduceVariant, n int, args []any) (float64, error) {
	d := v.first.prog.Params[0].Array.DType
	g := jit.ReduceGrid(v.first.prog, n)
	// Neither needs zeros: every block of the first kernel has an element
	// and writes its partial, and the second always writes the result; a
	// memset each would be two more operations on the stream per call.
	partials, err := rt.DeviceArray([]int{g}, d)
	if err != nil {
		return 0, err
	}
	defer partials.Free()
	result, err := rt.DeviceArray([]int{1}, d)
	if err != nil {
		return 0, err
	}
	defer result.Free()
	vals := flatArguments([]any{partials, float64(g), float64(n)}, args, n)
	second := []any{result, float64(1), partials, float64(g)}
	block := [3]uint32{jit.ReduceBlock, 1, 1}
	if err := rt.launchPair(v, LaunchConfig{Grid: [3]uint32{uint32(g), 1, 1}, Block: block}, vals,
		LaunchConfig{Grid: [3]uint32{1, 1, 1}, Block: block}, second, append([]any{partials, float64(n)}, args...)); err != nil {
		return 0, err
	}
	got, err := result.Float64s()
	if err != nil {
		return 0, err
	}
	return got[0], nil
}

// reduction is op for jit: a function op parsed (once per function
// literal, as map functions are).
func (rt *Runtime) reduction(op ReduceOp) (jit.Reduction, error) {
	if op.Tree == nil {
		return jit.Reduction{Name: op.Name}, nil
	}
	mf, err := rt.kernels.maps.function(op.Tree, op.Chunk)
	if err != nil {
		return jit.Reduction{}, err
	}
	return jit.Reduction{Fn: mf.fn}, nil
}

// emptyReduction is the error of reducing no elements (what says where)
// by an op that has no value for them: max, min or a function.
func emptyReduction(op ReduceOp, n int, what string) error {
	switch {
	case n > 0:
		return nil
	case op.Tree != nil:
		return fmt.Errorf("a reduction by %s of %s: a function op has no identity, so it needs at least one element", op, what)
	case op.Name == "max" || op.Name == "min":
		return fmt.Errorf("%s of %s", op.Name, what)
	}
	return nil
}

// reductionKey names op in a cache key: a function op by its syntax tree,
// as mapKernels.function caches it.
func reductionKey(op ReduceOp) string {
	if op.Tree != nil {
		return fmt.Sprintf("fn%p", op.Tree)
	}
	return op.Name
}

// mapReduceVariant translates (and on cuda compiles) both kernels of mf
// for one signature and op.
func (rt *Runtime) mapReduceVariant(mf *mapFunc, sig jit.Signature, op ReduceOp, red jit.Reduction) (*mapReduceVariant, error) {
	rt.kernels.maps.mu.Lock()
	defer rt.kernels.maps.mu.Unlock()
	key := reductionKey(op) + sig.String()
	if v, ok := mf.reductions[key]; ok {
		return v, nil
	}
	first, err := jit.CheckMapReduce(mf.fn, sig, red, jit.Options{})
	if err != nil {
		return nil, err
	}
	v := &mapReduceVariant{}
	if v.first, err = rt.readyVariant(first); err != nil {
		return nil, err
	}
	if v.second, err = rt.readyVariant(jit.ReducePartials(first, red)); err != nil {
		return nil, err
	}
	if mf.reductions == nil {
		mf.reductions = map[string]*mapReduceVariant{}
	}
	mf.reductions[key] = v
	return v, nil
}

// MapReduceAxis is MapReduce along one axis of 2-D arrays: axis 1
// combines over the first dimension (one result per column, shape[2] of
// them), axis 2 over the second (one per row, shape[1]), as NumPy's axis
// 0 and 1. The results go into out, a 1-D array of that many elements,
// converted to its dtype as a store converts; nil makes a new one of the
// first array argument's dtype when that is a float and the values are
// floats, int64 when the values are integers, float64 otherwise. Out's
// dtype must be a float dtype for float values, and int32, int64 or a
// float dtype for integers. One kernel (jit.CheckMapReduceAxis) whose
// order of combination depends only on the shape: the results are the
// same on every run and, for integers, on every backend. out may overlap
// an argument: every argument is read before out is written (overlap.go).
func (rt *Runtime) MapReduceAxis(tree *ast.FunctionExpr, chunk string, op ReduceOp, args []any, axis int, out *Array) (*Array, error) {
	if err := rt.usable(); err != nil {
		return nil, err
	}
	c, err := rt.checkReduce(tree, chunk, op, args, "the shape")
	if err != nil {
		return nil, err
	}
	mf, first, firstName, host := c.mf, c.first, c.firstName, c.host
	if axis != 1 && axis != 2 {
		return nil, fmt.Errorf("axis = %d is out of range: axis is 1 (one result per column) or 2 (one per row) of 2-D arrays", axis)
	}
	if len(first.shape) != 2 {
		return nil, fmt.Errorf("axis = %d needs 2-D arrays; %s has shape %s", axis, firstName, shapeOrScalar(first.shape))
	}
	sig, err := mapSignature(rt, mf, args, first.shape, firstName)
	if err != nil {
		return nil, err
	}
	red, err := rt.reduction(op)
	if err != nil {
		return nil, err
	}
	acc, err := jit.AccumulatorDType(mf.fn, sig, red)
	if err != nil {
		return nil, err
	}
	rows, cols := first.shape[0], first.shape[1]
	plan := jit.PlanAxis(rows, cols, axis, sig)
	m, length := plan.M, plan.Len
	if m > 0 && length == 0 { // a message only for an axis with nothing to reduce
		what := fmt.Sprintf("the %d elements of axis %d of %s (shape %s)", length, axis, firstName, shapeString(first.shape))
		if err := emptyReduction(op, length, what); err != nil {
			return nil, err
		}
	}
	d := device.Float64
	switch {
	case out != nil:
		if err := axisOut(rt, out, m, acc, axis, firstName, first.shape); err != nil {
			return nil, err
		}
		d = out.dtype
	case acc == device.Int64:
		d = device.Int64
	case first.dtype.IsFloat():
		d = first.dtype
	}
	v, err := rt.mapReduceAxisVariant(mf, sig, op, red, plan, acc, d)
	if err != nil {
		return nil, err
	}
	if err := rt.recordable(v.first.prog); err != nil {
		return nil, err
	}
	made := out == nil
	if made {
		if out, err = rt.Zeros([]int{m}, d); err != nil {
			return nil, err
		}
	}
	if i := overlapping(out, args); i >= 0 {
		return out, rt.throughTemporary(out, "out", args[i].(*Array), argName(mf, i), func(tmp *Array) error {
			return rt.runMapReduceAxis(v, plan, tmp, args, host)
		})
	}
	if err := rt.runMapReduceAxis(v, plan, out, args, host); err != nil {
		if made {
			out.Free()
		}
		return nil, err
	}
	return out, nil
}

// runMapReduceAxis runs an axis reduction's kernels into out, on the CPU
// for a host backend: the first alone when the plan has one segment,
// otherwise the first into partials and the second from them into out.
func (rt *Runtime) runMapReduceAxis(v *mapReduceVariant, plan jit.AxisPlan, out *Array, args []any, host bool) error {
	if plan.M == 0 {
		return nil
	}
	n := plan.M * plan.Len
	if host {
		mem := rt.backend.(HostMemory)
		vals := hostValues(mem, args, n)
		o := jit.HostArray{DType: out.dtype, Shape: []int{plan.M}, Data: mem.Bytes(out.ptr(), out.NBytes())}
		var second *jit.Program
		if v.second != nil {
			second = v.second.prog
		}
		uses := append(argumentReads(args), out.span().writes("output"))
		return rt.onHost(rt.streams.own, func() error { return jit.RunMapReduceAxis(v.first.prog, second, plan, o, vals) }, uses...)
	}
	dst := out
	if v.second != nil {
		// every partial is written: no zeros needed
		partials, err := rt.DeviceArray([]int{plan.Segments * plan.M}, v.first.prog.Params[0].Array.DType)
		if err != nil {
			return err
		}
		defer partials.Free()
		dst = partials
	}
	numbers := append([]any{dst}, plan.Values()...)
	vals := []any{dst, float64(dst.shape[0])}
	vals = flatArguments(append(vals, plan.Values()...), args, n)
	grid, block := plan.Launch()
	cfg := LaunchConfig{Grid: dims(grid), Block: dims(block)}
	if v.second == nil {
		return rt.launchRecorded(v.first.prog, v.first.kernel, cfg, vals, append(numbers, args...))
	}
	second := []any{out, float64(plan.M), dst, float64(dst.shape[0]), float64(plan.M), float64(plan.Segments)}
	pgrid, pblock := plan.PartialsLaunch()
	return rt.launchPair(v, cfg, vals, LaunchConfig{Grid: dims(pgrid), Block: dims(pblock)}, second, append(numbers, args...))
}

// launchPair launches a reduction's two kernels on the runtime's stream:
// the first, whose partials the second combines. Kernels that take an
// error record share one, zeroed before the first and read back after
// the second, and an error it holds is named with numbers, the first's
// arguments as the script gave them (recordedError).
func (rt *Runtime) launchPair(v *mapReduceVariant, firstCfg LaunchConfig, first []any, secondCfg LaunchConfig, second, numbers []any) error {
	var rec *Array
	if v.first.prog.HasErrorRecord() {
		var err error
		if rec, err = rt.Zeros([]int{jit.ErrorSlots}, device.Int64); err != nil {
			return err
		}
		defer rec.Free()
		first = append(first, rec)
		if v.second.prog.HasErrorRecord() {
			second = append(second, rec)
		}
	}
	if err := v.first.kernel.Launch(firstCfg, first...); err != nil {
		return err
	}
	if err := v.second.kernel.Launch(secondCfg, second...); err != nil {
		return err
	}
	if rec != nil {
		return recordedError(v.first.prog, numbers, rec, nil)
	}
	return nil
}

// dims is a launch's grid or block as a LaunchConfig takes it.
func dims(d [3]int) [3]uint32 { return [3]uint32{uint32(d[0]), uint32(d[1]), uint32(d[2])} }

// axisOut checks the out of an axis reduction: live, m elements in one
// dimension, and a dtype that holds the values (acc's kind).
func axisOut(rt *Runtime, out *Array, m int, acc device.DType, axis int, firstName string, shape []int) error {
	if err := out.live(rt, "out"); err != nil {
		return err
	}
	if len(out.shape) != 1 || out.shape[0] != m {
		return fmt.Errorf("out has shape %s; the results of axis = %d over %s (shape %s) have shape %d", shapeOrScalar(out.shape), axis, firstName, shapeString(shape), m)
	}
	switch {
	case out.dtype.IsFloat():
	case acc == device.Int64 && (out.dtype == device.Int32 || out.dtype == device.Int64):
	case acc == device.Int64:
		return fmt.Errorf("out is %s; integer results need int32, int64 or a float dtype", out.dtype)
	default:
		return fmt.Errorf("out is %s; float results need a float dtype (float16, bfloat16, float32 or float64)", out.dtype)
	}
	return nil
}

// mapReduceAxisVariant translates (and on cuda compiles) the kernels of
// an axis reduction of mf for one signature, op, plan and out dtype: the
// first storing into out's dtype when the plan has one segment, into
// partials of the accumulator's dtype acc otherwise, with the second.
func (rt *Runtime) mapReduceAxisVariant(mf *mapFunc, sig jit.Signature, op ReduceOp, red jit.Reduction, plan jit.AxisPlan, acc, out device.DType) (*mapReduceVariant, error) {
	rt.kernels.maps.mu.Lock()
	defer rt.kernels.maps.mu.Unlock()
	dst, segmented := out, plan.Segments > 1
	if segmented {
		dst = acc
	}
	key := fmt.Sprintf("%s %s %+v segmented=%t%s", reductionKey(op), out, plan.AxisForm, segmented, sig)
	if v, ok := mf.axes[key]; ok {
		return v, nil
	}
	first, err := jit.CheckMapReduceAxis(mf.fn, sig, red, dst, plan.AxisForm, jit.Options{})
	if err != nil {
		return nil, err
	}
	v := &mapReduceVariant{}
	if v.first, err = rt.readyVariant(first); err != nil {
		return nil, err
	}
	if segmented {
		if v.second, err = rt.readyVariant(jit.AxisPartials(first, red, out)); err != nil {
			return nil, err
		}
	}
	if mf.axes == nil {
		mf.axes = map[string]*mapReduceVariant{}
	}
	mf.axes[key] = v
	return v, nil
}

// reduceCall is what MapReduce and MapReduceAxis check alike before
// anything runs: the op, a backend that can run the function, its
// arity, and the first array argument (live), which gives what.
type reduceCall struct {
	mf        *mapFunc
	first     *Array
	firstName string
	host      bool
}

func (rt *Runtime) checkReduce(tree *ast.FunctionExpr, chunk string, op ReduceOp, args []any, gives string) (reduceCall, error) {
	var c reduceCall
	if op.Tree == nil && !jit.IsReduceOp(op.Name) {
		return c, fmt.Errorf("op %q is not a reduction (sum, prod, max, min or a function of two values)", op.Name)
	}
	_, c.host = rt.backend.(HostMemory)
	if _, compiles := rt.backend.(KernelCompiler); !c.host && !compiles {
		return c, fmt.Errorf("kernels.map_reduce needs the cuda backend or a host backend; this runtime runs on %s", rt.backend.Name())
	}
	var err error
	if c.mf, err = rt.kernels.maps.function(tree, chunk); err != nil {
		return c, err
	}
	if len(args) != len(c.mf.fn.Params) {
		return c, fmt.Errorf("the function at %s:%d takes %d arguments, got %d", chunk, c.mf.fn.Line(), len(c.mf.fn.Params), len(args))
	}
	for i, a := range args {
		if arr, ok := a.(*Array); ok {
			c.first, c.firstName = arr, fmt.Sprintf("argument %d (%s)", i+1, c.mf.fn.Params[i])
			break
		}
	}
	if c.first == nil {
		return c, errors.New("at least one argument must be a DeviceArray: it gives " + gives)
	}
	return c, c.first.live(rt, c.firstName)
}

// hostValues is args for the CPU evaluator: each array as the n elements
// of its memory on a host backend, numbers as they are.
func hostValues(mem HostMemory, args []any, n int) []any {
	vals := make([]any, len(args))
	for i, a := range args {
		if arr, ok := a.(*Array); ok {
			vals[i] = jit.HostArray{DType: arr.dtype, Shape: []int{n}, Data: mem.Bytes(arr.ptr(), arr.NBytes())}
		} else {
			vals[i] = a
		}
	}
	return vals
}

// argumentReads are the arrays among a map's arguments as the reads of
// its kernel, for the CPU backend's check of the streams' order.
func argumentReads(args []any) []device.Access {
	var uses []device.Access
	for i, a := range args {
		if arr, ok := a.(*Array); ok {
			uses = append(uses, arr.span().reads(fmt.Sprintf("argument %d", i+1)))
		}
	}
	return uses
}
