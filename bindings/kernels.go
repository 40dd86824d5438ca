package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

// kernelsRuntime is what the kernels module needs from a runtime.
type kernelsRuntime interface {
	Fill(x *runtime.Array, v float64) error
	Scale(x *runtime.Array, a float64) error
	Copy(dst, src *runtime.Array) error
	Add(y, x *runtime.Array) error
	Mul(y, x *runtime.Array) error
	Axpy(y *runtime.Array, a float64, x *runtime.Array) error
	Sum(x *runtime.Array) (float64, error)
	Norm(x *runtime.Array) (float64, error)
	MaxAbsDiff(x, y *runtime.Array) (float64, error)
	Matmul(C, A, B *runtime.Array, o runtime.MatmulOptions) error
	Compile(source, entry string, options, signature []string) (*runtime.Kernel, error)
	KernelCacheStats() (compiles, cacheHits int64)
}

// kernelsModule is the kernels module. Every kernel writes into its first
// argument and returns it, so calls chain. One method per Lua function;
// funcs is its table.
type kernelsModule struct{ rt kernelsRuntime }

func (m kernelsModule) funcs() map[string]lua.LGFunction {
	return map[string]lua.LGFunction{
		"matmul":       m.matmul,
		"compile":      m.compile,
		"fill":         m.fill,
		"scale":        m.scale,
		"copy":         m.copy,
		"add":          m.add,
		"mul":          m.mul,
		"axpy":         m.axpy,
		"sum":          m.sum,
		"norm":         m.norm,
		"max_abs_diff": m.maxAbsDiff,
		"cache_stats":  m.cacheStats,
	}
}

// openKernels is the loader of the kernels module.
func openKernels(rt *runtime.Runtime, L *lua.LState) int {
	registerArrayTypes(rt, L)
	L.Push(L.SetFuncs(L.NewTable(), kernelsModule{rt}.funcs()))
	return 1
}

func (m kernelsModule) fill(L *lua.LState) int {
	return withNumber(L, "kernels.fill", "value", m.rt.Fill)
}

func (m kernelsModule) scale(L *lua.LState) int {
	return withNumber(L, "kernels.scale", "factor", m.rt.Scale)
}

func (m kernelsModule) copy(L *lua.LState) int { return twoArrays(L, "kernels.copy", m.rt.Copy) }
func (m kernelsModule) add(L *lua.LState) int  { return twoArrays(L, "kernels.add", m.rt.Add) }
func (m kernelsModule) mul(L *lua.LState) int  { return twoArrays(L, "kernels.mul", m.rt.Mul) }

func (m kernelsModule) axpy(L *lua.LState) int {
	const name = "kernels.axpy"
	y := checkArray(L, name, 1)
	a, ok := L.Get(2).(lua.LNumber)
	if !ok {
		argError(L, name, 2, "a must be a number, got %s", typeName(L.Get(2)))
	}
	x := checkArray(L, name, 3)
	if err := m.rt.Axpy(y, float64(a), x); err != nil {
		raise(L, name, err)
	}
	L.Push(L.Get(1))
	return 1
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
	v, ok := L.Get(2).(lua.LNumber)
	if !ok {
		argError(L, name, 2, "%s must be a number, got %s", what, typeName(L.Get(2)))
	}
	if err := f(x, float64(v)); err != nil {
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
