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

// MapReduce combines fn(args[1][i], args[2][i], ...) over every element
// i by op ("sum", "prod", "max" or "min") and returns the result: fn is
// a map function as for Map, the arrays of one shape, numbers broadcast.
// Floats combine in float64, integers in int64. Two kernels (jit.
// CheckMapReduce and jit.ReducePartials) whose order of combination
// depends only on the number of elements, so a result is the same on
// every run and, for integers, on every backend.
func (rt *Runtime) MapReduce(tree *ast.FunctionExpr, chunk, op string, args []any) (float64, error) {
	if err := rt.usable(); err != nil {
		return 0, err
	}
	if err := rt.uncapturable("a reduction to a number"); err != nil {
		return 0, err
	}
	if !jit.IsReduceOp(op) {
		return 0, fmt.Errorf("op %q is not a reduction (sum, prod, max or min)", op)
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
	v, err := rt.mapReduceVariant(mf, sig, op, host, cb)
	if err != nil {
		return 0, err
	}
	n := first.size
	if n == 0 && (op == "max" || op == "min") {
		return 0, fmt.Errorf("%s of no elements", op)
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

// mapReduceVariant translates (and on cuda compiles) both kernels of mf
// for one signature and op.
func (rt *Runtime) mapReduceVariant(mf *mapFunc, sig jit.Signature, op string, host bool, cb KernelCompiler) (*mapReduceVariant, error) {
	rt.maps.mu.Lock()
	defer rt.maps.mu.Unlock()
	key := op + sig.String()
	if v, ok := mf.reductions[key]; ok {
		return v, nil
	}
	first, err := jit.CheckMapReduce(mf.fn, sig, op, jit.Options{})
	if err != nil {
		return nil, err
	}
	v := &mapReduceVariant{first: &jitVariant{prog: first}, second: &jitVariant{prog: jit.ReducePartials(first, op)}}
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
