package runtime

import (
	"fmt"
	"math"
	"slices"

	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/jit"
	"github.com/gluaproject/glua/kernels"
)

type mapFunc struct {
	fn         *jit.Function
	variants   map[string]*jitVariant       // by out's dtype and the signature
	reductions map[string]*mapReduceVariant // by op and the signature
	axes       map[string]*mapReduceVariant // axis reductions, by op, form, dtypes and the signature
}

// Map writes out[i] = fn(args[1][i], args[2][i], ...) for every element i
// in one kernel: tree is a function in the kernel language taking
// elements and ending in `return expr` (jit.ParseMap), each argument an
// *Array of out's shape (read flat, row-major) or a float64, the same
// for every element. The result converts to out's dtype as a store into
// an array does. Translated once per signature; on cuda each entry
// (mapEntry) is compiled when a launch first needs it.
// An argument may be out itself, or a view that partly overlaps it: every
// argument is read before out is written (overlap.go).
func (rt *Runtime) Map(tree *ast.FunctionExpr, chunk string, out *Array, args []any) error {
	if err := rt.usable(); err != nil {
		return err
	}
	_, host := rt.backend.(HostMemory)
	if _, compiles := rt.backend.(KernelCompiler); !host && !compiles {
		return fmt.Errorf("kernels.map needs the cuda backend or a host backend; this runtime runs on %s", rt.backend.Name())
	}
	if err := out.live(rt, "out"); err != nil {
		return err
	}
	mf, err := rt.kernels.maps.function(tree, chunk)
	if err != nil {
		return err
	}
	if len(args) != len(mf.fn.Params) {
		return fmt.Errorf("the function at %s:%d takes %d arguments, got %d arrays and numbers after out", chunk, mf.fn.Line(), len(mf.fn.Params), len(args))
	}
	sig, err := mapSignature(rt, mf, args, out.shape, "out")
	if err != nil {
		return err
	}
	v, err := rt.mapVariant(mf, sig, out.dtype)
	if err != nil {
		return err
	}
	if err := rt.recordable(v.prog); err != nil {
		return err
	}
	if out.size == 0 {
		return nil
	}
	if i := overlapping(out, args); i >= 0 {
		return rt.throughTemporary(out, "out", args[i].(*Array), argName(mf, i), func(tmp *Array) error {
			return rt.runMap(v, tmp, args, host)
		})
	}
	return rt.runMap(v, out, args, host)
}

// argName is how messages call argument i of a map function.
func argName(mf *mapFunc, i int) string {
	return fmt.Sprintf("argument %d (%s)", i+1, mf.fn.Params[i])
}

// runMap launches a map's kernel into out, on the CPU for a host backend.
// On the GPU its shape is the built-in elementwise kernels'
// (kernels.ElementwiseShape), over 16-byte vectors when the program has
// an entry for them and every array's pointer is 16-byte aligned, and the
// vectors launch with their residency (mapKernels.residency).
func (rt *Runtime) runMap(v *jitVariant, out *Array, args []any, host bool) error {
	n := out.size
	if host {
		mem := rt.backend.(HostMemory)
		flat := func(a *Array) jit.HostArray {
			return jit.HostArray{DType: a.dtype, Shape: []int{n}, Data: mem.Bytes(a.ptr(), a.NBytes())}
		}
		vals := []any{flat(out)}
		uses := append([]device.Access{out.span().writes("output")}, argumentReads(args)...)
		for _, a := range args {
			if arr, ok := a.(*Array); ok {
				vals = append(vals, flat(arr))
			} else {
				vals = append(vals, a)
			}
		}
		grid, block := kernels.ElementwiseShape(0, n, out.dtype.Size(), false)
		return rt.onHost(rt.streams.own, func() error {
			return jit.Run(v.prog, [3]int{int(grid[0]), 1, 1}, [3]int{int(block[0]), 1, 1}, vals)
		}, uses...)
	}
	vec := v.prog.VectorEntry() != "" && aligned16(out, args)
	maps := &rt.kernels.maps
	e, cfg := mapEntry{vector: vec, wide: !kernels.Index32(n)}, LaunchConfig{}
	if vec {
		cfg.Shared, e.carveout = maps.residency(rt.backend, arrayCount(args))
	}
	k, err := rt.mapKernel(v, e)
	if err != nil {
		return err
	}
	cfg.Grid, cfg.Block = kernels.ElementwiseShape(maps.multiprocessors(rt.backend), n, out.dtype.Size(), vec)
	vals := flatArguments([]any{out, float64(n)}, args, n)
	return rt.launchRecorded(v.prog, k, cfg, vals, append([]any{out}, args...))
}

// arrayCount is how many of args are arrays.
func arrayCount(args []any) int {
	n := 0
	for _, a := range args {
		if _, ok := a.(*Array); ok {
			n++
		}
	}
	return n
}

// flatArguments appends a map function's arguments to a launch's vals:
// each array followed by its n elements, as the kernel's flat parameter
// takes it.
func flatArguments(vals, args []any, n int) []any {
	for _, a := range args {
		vals = append(vals, a)
		if _, ok := a.(*Array); ok {
			vals = append(vals, float64(n))
		}
	}
	return vals
}

// aligned16 says whether out and every array among args start on a
// 16-byte boundary, as the vector entry's loads and stores need.
func aligned16(out *Array, args []any) bool {
	if out.ptr()%16 != 0 {
		return false
	}
	for _, a := range args {
		if arr, ok := a.(*Array); ok && arr.ptr()%16 != 0 {
			return false
		}
	}
	return true
}

// mapSignature checks args against the function's parameters and the
// arrays' shape against shape (that of the array called what).
func mapSignature(rt *Runtime, mf *mapFunc, args []any, shape []int, what string) (jit.Signature, error) {
	sig := make(jit.Signature, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case *Array:
			if err := v.live(rt, argName(mf, i)); err != nil {
				return nil, err
			}
			if !slices.Equal(v.shape, shape) {
				return nil, fmt.Errorf("argument %d (%s) has shape %s and %s has shape %s; the arrays must have one shape (numbers broadcast)",
					i+1, mf.fn.Params[i], shapeOrScalar(v.shape), what, shapeOrScalar(shape))
			}
			sig[i] = jit.Arg{Array: true, DType: v.dtype, Rank: len(v.shape)}
		case float64:
			sig[i] = jit.Arg{Float: v != math.Trunc(v) || math.Abs(v) > 1<<53}
		default:
			return nil, fmt.Errorf("argument %d (%s): a DeviceArray or a number is expected, got %s", i+1, mf.fn.Params[i], describe(a))
		}
	}
	return sig, nil
}

func shapeOrScalar(shape []int) string {
	if len(shape) == 0 {
		return "() (a scalar)"
	}
	return shapeString(shape)
}

// mapVariant translates (and on cuda compiles, through the kernel cache)
// mf for one signature.
func (rt *Runtime) mapVariant(mf *mapFunc, sig jit.Signature, out device.DType) (*jitVariant, error) {
	rt.kernels.maps.mu.Lock()
	defer rt.kernels.maps.mu.Unlock()
	key := out.String() + sig.String()
	if v, ok := mf.variants[key]; ok {
		return v, nil
	}
	prog, err := jit.CheckMap(mf.fn, sig, out, jit.Options{})
	if err != nil {
		return nil, err
	}
	v, err := rt.readyVariant(prog)
	if err != nil {
		return nil, err
	}
	mf.variants[key] = v
	return v, nil
}
