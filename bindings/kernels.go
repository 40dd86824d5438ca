package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

// openKernels is the loader of the kernels module. Every kernel writes into
// its first argument and returns it, so calls chain.
func openKernels(rt *runtime.Runtime, L *lua.LState) int {
	registerArrayTypes(rt, L)
	// inPlace wraps a kernel of the form f(y, x) or f(x).
	unary := func(name string, f func(x *runtime.Array, v float64) error, what string) lua.LGFunction {
		return func(L *lua.LState) int {
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
	}
	binary := func(name string, f func(y, x *runtime.Array) error) lua.LGFunction {
		return func(L *lua.LState) int {
			y := checkArray(L, name, 1)
			x := checkArray(L, name, 2)
			if err := f(y, x); err != nil {
				raise(L, name, err)
			}
			L.Push(L.Get(1))
			return 1
		}
	}
	reduce := func(name string, f func(x *runtime.Array) (float64, error)) lua.LGFunction {
		return func(L *lua.LState) int {
			v, err := f(checkArray(L, name, 1))
			if err != nil {
				raise(L, name, err)
			}
			L.Push(lua.LNumber(v))
			return 1
		}
	}
	mod := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"matmul":  func(L *lua.LState) int { return matmul(rt, L) },
		"compile": func(L *lua.LState) int { return compile(rt, L) },
		"fill":    unary("kernels.fill", rt.Fill, "value"),
		"scale":   unary("kernels.scale", rt.Scale, "factor"),
		"copy":    binary("kernels.copy", rt.Copy),
		"add":     binary("kernels.add", rt.Add),
		"mul":     binary("kernels.mul", rt.Mul),
		"axpy": func(L *lua.LState) int {
			const name = "kernels.axpy"
			y := checkArray(L, name, 1)
			a, ok := L.Get(2).(lua.LNumber)
			if !ok {
				argError(L, name, 2, "a must be a number, got %s", typeName(L.Get(2)))
			}
			x := checkArray(L, name, 3)
			if err := rt.Axpy(y, float64(a), x); err != nil {
				raise(L, name, err)
			}
			L.Push(L.Get(1))
			return 1
		},
		"cache_stats": func(L *lua.LState) int {
			compiles, hits := rt.KernelCacheStats()
			t := L.NewTable()
			t.RawSetString("compiles", lua.LNumber(compiles))
			t.RawSetString("cache_hits", lua.LNumber(hits))
			L.Push(t)
			return 1
		},
		"sum":  reduce("kernels.sum", rt.Sum),
		"norm": reduce("kernels.norm", rt.Norm),
		"max_abs_diff": func(L *lua.LState) int {
			const name = "kernels.max_abs_diff"
			v, err := rt.MaxAbsDiff(checkArray(L, name, 1), checkArray(L, name, 2))
			if err != nil {
				raise(L, name, err)
			}
			L.Push(lua.LNumber(v))
			return 1
		},
	})
	L.Push(mod)
	return 1
}

// matmul is kernels.matmul(C, A, B [, {alpha, beta, trans_a, trans_b, precision}]).
func matmul(rt *runtime.Runtime, L *lua.LState) int {
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
	if err := rt.Matmul(C, A, B, o); err != nil {
		raise(L, name, err)
	}
	L.Push(L.Get(1))
	return 1
}
