package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/jit"
	"github.com/gluaproject/glua/runtime"
)

// jit is kernels.jit(fn [, {name =, check_bounds = false}]).
func (m kernelsModule) jit(L *lua.LState) int {
	const name = "kernels.jit"
	tree, fn := functionTree(L, name)
	opts := options(L, name, 2, "name", "check_bounds")
	o := jit.Options{
		Name:        optString(L, name, opts, "name", ""),
		CheckBounds: optBool(L, name, opts, "check_bounds", false),
	}
	k, err := m.rt.JIT(tree, fn.Proto.SourceName, o)
	if err != nil {
		raise(L, name, err)
	}
	pushUserData(L, k, kernelType)
	return 1
}

// insideKernel is each kernels function of the kernel language
// (kernels.grid, kernels.syncthreads...): kernels.jit translates their
// calls, and called from plain Lua they say so.
func insideKernel(fname string) lua.LGFunction {
	return func(L *lua.LState) int {
		badArgument(L, "kernels.%s: only inside a function compiled by kernels.jit", fname)
		return 0
	}
}

// launcher is a kernel k:launch runs: CUDA C from kernels.compile or a
// Lua function from kernels.jit.
type launcher interface {
	Launch(cfg runtime.LaunchConfig, args ...any) error
}

var (
	_ launcher = (*runtime.Kernel)(nil)
	_ launcher = (*runtime.JITKernel)(nil)
)
