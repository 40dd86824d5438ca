package bindings

import (
	"fmt"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/luac"

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
		Env:         upvalues{fn: fn, devices: &deviceFunctions{parsed: map[*lua.LFunction]jit.Capture{}}},
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

// insideKernelIndex is kernels.threadIdx and its kind: tables whose
// fields a kernel reads, and which say so when plain Lua reads them.
func insideKernelIndex(L *lua.LState, name string) *lua.LTable {
	t := L.NewTable()
	t.Metatable = L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{"__index": func(L *lua.LState) int {
		badArgument(L, "kernels.%s.%s: only inside a function compiled by kernels.jit", name, lua.LVAsString(L.Get(2)))
		return 0
	}})
	return t
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

// upvalues are the locals of the script a kernel's function captures, as
// the kernel language reads them: each value as it is when asked, so that
// a launch compiles in the numbers the script holds then.
type upvalues struct {
	fn      *lua.LFunction
	devices *deviceFunctions // shared by the kernel and its device functions
}

// deviceFunctions are the captured functions parsed as device functions,
// each once.
type deviceFunctions struct {
	mu     sync.Mutex
	parsed map[*lua.LFunction]jit.Capture
}

func (u upvalues) Upvalue(name string) (jit.Capture, bool) {
	for i, n := range u.fn.Proto.DbgUpvalues {
		if n != name || i >= len(u.fn.Upvalues) {
			continue
		}
		switch v := u.fn.Upvalues[i].Value().(type) {
		case lua.LNumber:
			return jit.Capture{Kind: "number", Number: float64(v)}, true
		case *lua.LFunction:
			return u.devices.parse(name, v), true
		default:
			return jit.Capture{Kind: v.Type().String()}, true
		}
	}
	return jit.Capture{}, false
}

// parse is fn as a device function, parsed the first time it is asked for.
func (d *deviceFunctions) parse(name string, fn *lua.LFunction) jit.Capture {
	d.mu.Lock()
	c, ok := d.parsed[fn]
	if !ok {
		// a function that captures itself (recursion, which the typer
		// refuses naming the cycle) finds this while it is parsed
		d.parsed[fn] = jit.Capture{Kind: "function"}
	}
	d.mu.Unlock()
	if ok {
		return c
	}
	c = jit.Capture{Kind: "function"}
	tree, found := luac.FunctionTree(fn)
	if found {
		c.Func, c.Err = jit.ParseDevice(tree, fn.Proto.SourceName, upvalues{fn: fn, devices: d})
	} else {
		c.Err = fmt.Errorf("the captured function %s has no source to translate (a Go function, or one compiled outside glua's loader)", name)
	}
	d.mu.Lock()
	d.parsed[fn] = c
	d.mu.Unlock()
	return c
}
