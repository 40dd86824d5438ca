package bindings

import (
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/jit"
	"github.com/gluaproject/glua/kernels"
	"github.com/gluaproject/glua/runtime"
)

// kernelsRuntime is what the kernels module needs from a runtime.
type kernelsRuntime interface {
	Fill(x *runtime.Array, v float64) error
	Elementwise(op *kernels.ElementwiseOp, y *runtime.Array, a float64, x *runtime.Array) error
	Copy(dst, src *runtime.Array) error
	Sum(x *runtime.Array) (float64, error)
	Norm(x *runtime.Array) (float64, error)
	MaxAbsDiff(x, y *runtime.Array) (float64, error)
	Matmul(C, A, B *runtime.Array, o runtime.MatmulOptions) error
	Compile(source, entry string, options, signature []string) (*runtime.Kernel, error)
	UserCUDA() error
	JIT(tree *ast.FunctionExpr, chunk string, o jit.Options) (*runtime.JITKernel, error)
	Map(tree *ast.FunctionExpr, chunk string, out *runtime.Array, args []any) error
	MapReduce(tree *ast.FunctionExpr, chunk string, op runtime.ReduceOp, args []any) (float64, error)
	MapReduceAxis(tree *ast.FunctionExpr, chunk string, op runtime.ReduceOp, args []any, axis int, out *runtime.Array) (*runtime.Array, error)
	GiveToScript(a *runtime.Array) error
	KernelCacheStats() (compiles, cacheHits int64)
}

// kernelsModule is the kernels module. Every kernel writes into its first
// argument and returns it, so calls chain. One method per Lua function;
// funcs is its table. The elementwise kernels (kernels.scale, kernels.axpy,
// kernels.add, ...) are entries of package kernels' table instead
// (elementwise_ops.go), each made a Lua function by m.elementwise.
type kernelsModule struct{ rt kernelsRuntime }

func (m kernelsModule) funcs() map[string]lua.LGFunction {
	funcs := map[string]lua.LGFunction{
		"matmul":       m.matmul,
		"compile":      m.compile,
		"fill":         m.fill,
		"copy":         m.copy,
		"sum":          m.sum,
		"norm":         m.norm,
		"max_abs_diff": m.maxAbsDiff,
		"cache_stats":  m.cacheStats,
		"jit":          m.jit,
		"map":          m.mapFn,
		"map_reduce":   m.mapReduce,
	}
	for _, name := range jit.KernelFunctions() {
		funcs[name] = insideKernel(name)
	}
	for _, op := range kernels.ElementwiseOps() {
		if funcs[op.Name] != nil {
			panic("bindings: elementwise kernel " + op.Name + " would replace kernels." + op.Name)
		}
		funcs[op.Name] = m.elementwise(op)
	}
	return funcs
}

// openKernels is the loader of the kernels module.
func openKernels(rt *runtime.Runtime, L *lua.LState) int {
	registerArrayTypes(rt, L)
	registerKernelType(L)
	mod := L.SetFuncs(L.NewTable(), kernelsModule{rt}.funcs())
	for _, name := range jit.IndexNames() {
		mod.RawSetString(name, insideKernelIndex(L, name))
	}
	L.Push(strictModule(L, "kernels", mod))
	return 1
}

func (m kernelsModule) fill(L *lua.LState) int {
	return withNumber(L, "kernels.fill", "value", m.rt.Fill)
}

func (m kernelsModule) copy(L *lua.LState) int { return twoArrays(L, "kernels.copy", m.rt.Copy) }

// elementwise is the Lua function of op: kernels.<name>(y[, a][, x]),
// with the number only if op takes one and x only if it takes two arrays.
func (m kernelsModule) elementwise(op *kernels.ElementwiseOp) lua.LGFunction {
	name := "kernels." + op.Name
	return func(L *lua.LState) int {
		y := checkArray(L, name, 1)
		a, next := 0.0, 2
		if op.Scalar != "" {
			a, next = checkNumber(L, name, 2, op.Scalar), 3
		}
		var x *runtime.Array
		if op.Arrays == 2 {
			x = checkArray(L, name, next)
		}
		if err := m.rt.Elementwise(op, y, a, x); err != nil {
			raise(L, name, err)
		}
		L.Push(L.Get(1))
		return 1
	}
}

func (m kernelsModule) sum(L *lua.LState) int  { return reduction(L, "kernels.sum", m.rt.Sum) }
func (m kernelsModule) norm(L *lua.LState) int { return reduction(L, "kernels.norm", m.rt.Norm) }

func (m kernelsModule) maxAbsDiff(L *lua.LState) int {
	const name = "kernels.max_abs_diff"
	v, err := m.rt.MaxAbsDiff(checkArray(L, name, 1), checkArray(L, name, 2))
	if err != nil {
		raise(L, name, err)
	}
	L.Push(lua.LNumber(v))
	return 1
}

func (m kernelsModule) cacheStats(L *lua.LState) int {
	compiles, hits := m.rt.KernelCacheStats()
	t := L.NewTable()
	t.RawSetString("compiles", lua.LNumber(compiles))
	t.RawSetString("cache_hits", lua.LNumber(hits))
	L.Push(t)
	return 1
}

// matmul is kernels.matmul(C, A, B [, {alpha, beta, trans_a, trans_b, precision}]).
func (m kernelsModule) matmul(L *lua.LState) int {
	const name = "kernels.matmul"
	C := checkArray(L, name, 1)
	A := checkArray(L, name, 2)
	B := checkArray(L, name, 3)
	opts := options(L, name, 4, "alpha", "beta", "trans_a", "trans_b", "precision")
	o := runtime.MatmulOptions{
		Alpha:     optNumber(L, name, opts, "alpha", 1),
		AlphaSet:  true,
		Beta:      optNumber(L, name, opts, "beta", 0),
		TransA:    optBool(L, name, opts, "trans_a", false),
		TransB:    optBool(L, name, opts, "trans_b", false),
		Precision: optString(L, name, opts, "precision", "default"),
	}
	if err := m.rt.Matmul(C, A, B, o); err != nil {
		raise(L, name, err)
	}
	L.Push(L.Get(1))
	return 1
}

// withNumber is a kernel f(x, v) on an array and a number named what.
func withNumber(L *lua.LState, name, what string, f func(x *runtime.Array, v float64) error) int {
	x := checkArray(L, name, 1)
	if err := f(x, checkNumber(L, name, 2, what)); err != nil {
		raise(L, name, err)
	}
	L.Push(L.Get(1))
	return 1
}

// twoArrays is a kernel f(y, x) that writes y.
func twoArrays(L *lua.LState, name string, f func(y, x *runtime.Array) error) int {
	y := checkArray(L, name, 1)
	x := checkArray(L, name, 2)
	if err := f(y, x); err != nil {
		raise(L, name, err)
	}
	L.Push(L.Get(1))
	return 1
}

// reduction is a kernel f(x) that returns a number.
func reduction(L *lua.LState, name string, f func(x *runtime.Array) (float64, error)) int {
	v, err := f(checkArray(L, name, 1))
	if err != nil {
		raise(L, name, err)
	}
	L.Push(lua.LNumber(v))
	return 1
}
