package runtime

import (
	"errors"
	"fmt"

	"github.com/yuin/gopher-lua/ast"

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
	if op.Tree == nil && !jit.IsReduceOp(op.Name) {
		return 0, fmt.Errorf("op %q is not a reduction (sum, prod, max, min or a function of two values)", op.Name)
	}
	_, host := rt.backend.(HostMemory)
	cb, compiles := rt.backend.(KernelCompiler)
	if !host && !compiles {
		return 0, fmt.Errorf("kernels.map_reduce needs the cuda backend or a host backend; this runtime runs on %s", rt.backend.Name())
	}
	mf, err := rt.mapFunction(tree, chunk)
	if err != nil {
		return 0, err
	}
	if len(args) != len(mf.fn.Params) {
		return 0, fmt.Errorf("the function at %s:%d takes %d arguments, got %d", chunk, mf.fn.Line(), len(mf.fn.Params), len(args))
	}
	var first *Array
	firstName := ""
	for i, a := range args {
		if arr, ok := a.(*Array); ok {
			first, firstName = arr, fmt.Sprintf("argument %d (%s)", i+1, mf.fn.Params[i])
			break
		}
	}
	if first == nil {
		return 0, errors.New("at least one argument must be a DeviceArray: it gives the number of elements")
	}
	if err := first.live(rt, firstName); err != nil {
		return 0, err
	}
	sig, err := mapSignature(rt, mf, args, first.shape, firstName)
	if err != nil {
		return 0, err
	}
	red, err := rt.reduction(op)
	if err != nil {
		return 0, err
	}
	v, err := rt.mapReduceVariant(mf, sig, op, red, host, cb)
	if err != nil {
		return 0, err
	}
	n := first.size
	if err := emptyReduction(op, n, "no elements"); err != nil {
		return 0, err
	}
	if host {
		mem := rt.backend.(HostMemory)
		vals := make([]any, len(args))
		for i, a := range args {
			if arr, ok := a.(*Array); ok {
				vals[i] = jit.HostArray{DType: arr.dtype, Shape: []int{n}, Data: mem.Bytes(arr.ptr(), arr.NBytes())}
			} else {
				vals[i] = a
			}
		}
		return jit.RunMapReduce(v.first.prog, v.second.prog, n, vals)
	}
	return rt.mapReduceOnDevice(v, n, args)
}

// mapReduceOnDevice launches both kernels on the runtime's stream and
// reads the result back.
func (rt *Runtime) mapReduceOnDevice(v *mapReduceVariant, n int, args []any) (float64, error) {
	d := v.first.prog.Params[0].Array.DType
	g := jit.ReduceGrid(n)
	partials, err := rt.Zeros([]int{g}, d)
	if err != nil {
		return 0, err
	}
	defer partials.Free()
	result, err := rt.Zeros([]int{1}, d)
	if err != nil {
		return 0, err
	}
	defer result.Free()
	vals := []any{partials, float64(g), float64(n)}
	for _, a := range args {
		vals = append(vals, a)
		if _, ok := a.(*Array); ok {
			vals = append(vals, float64(n))
		}
	}
	block := [3]uint32{jit.ReduceBlock, 1, 1}
	if err := v.first.kernel.Launch(LaunchConfig{Grid: [3]uint32{uint32(g), 1, 1}, Block: block}, vals...); err != nil {
		return 0, err
	}
	if err := v.second.kernel.Launch(LaunchConfig{Grid: [3]uint32{1, 1, 1}, Block: block}, result, float64(1), partials, float64(g)); err != nil {
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
	mf, err := rt.mapFunction(op.Tree, op.Chunk)
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
// as mapFunction caches it.
func reductionKey(op ReduceOp) string {
	if op.Tree != nil {
		return fmt.Sprintf("fn%p", op.Tree)
	}
	return op.Name
}

// mapReduceVariant translates (and on cuda compiles) both kernels of mf
// for one signature and op.
func (rt *Runtime) mapReduceVariant(mf *mapFunc, sig jit.Signature, op ReduceOp, red jit.Reduction, host bool, cb KernelCompiler) (*mapReduceVariant, error) {
	rt.maps.mu.Lock()
	defer rt.maps.mu.Unlock()
	key := reductionKey(op) + sig.String()
	if v, ok := mf.reductions[key]; ok {
		return v, nil
	}
	first, err := jit.CheckMapReduce(mf.fn, sig, red, jit.Options{})
	if err != nil {
		return nil, err
	}
	v := &mapReduceVariant{first: &jitVariant{prog: first}, second: &jitVariant{prog: jit.ReducePartials(first, red)}}
	if !host {
		for _, jv := range []*jitVariant{v.first, v.second} {
			if jv.kernel, err = rt.newKernel(cb, jit.CUDA(jv.prog), jv.prog.Name, jitOptions, jitParams(jv.prog)); err != nil {
				return nil, err
			}
		}
	}
	if mf.reductions == nil {
		mf.reductions = map[string]*mapReduceVariant{}
	}
	mf.reductions[key] = v
	return v, nil
}
