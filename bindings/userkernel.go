package bindings

import (
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

const kernelType = "glua.Kernel"

// compileOptions reads kernels.compile's options: NVRTC flags, and the
// kernel's parameter types when its declaration should not be read.
func compileOptions(L *lua.LState, name string, opts *lua.LTable) (flags, signature []string) {
	switch v := opts.RawGetString("options").(type) {
	case *lua.LNilType:
	case *lua.LTable:
		flags = stringList(L, name, "options", v)
	default:
		badArgument(L, "%s: option options must be a table of strings, got %s", name, typeName(v))
	}
	switch v := opts.RawGetString("signature").(type) {
	case *lua.LNilType:
	case lua.LString:
		signature = strings.Split(string(v), ",")
	case *lua.LTable:
		signature = stringList(L, name, "signature", v)
		if signature == nil {
			signature = []string{}
		}
	default:
		badArgument(L, "%s: option signature must be a string or a table of strings, got %s", name, typeName(v))
	}
	return flags, signature
}

// registerKernelType makes the Kernel metatable when the kernels module
// opens, as the other modules make their types, though only the cuda
// backend compiles kernels: the type and its methods then exist, for
// what lists them, wherever the module does.
func registerKernelType(L *lua.LState) {
	mt := L.NewTypeMetatable(kernelType)
	methods := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{"launch": launch})
	strictMethods(L, "Kernel", methods)
	L.SetField(mt, "__index", methods)
	L.SetField(mt, "__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString("Kernel"))
		return 1
	}))
}

// compile is kernels.compile(source, entry [, {options = {...}, signature = ...}]).
func (m kernelsModule) compile(L *lua.LState) int {
	const name = "kernels.compile"
	src, ok := L.Get(1).(lua.LString)
	if !ok {
		argError(L, name, 1, "CUDA C source string expected, got %s", typeName(L.Get(1)))
	}
	entry, ok := L.Get(2).(lua.LString)
	if !ok {
		argError(L, name, 2, "kernel entry name expected, got %s", typeName(L.Get(2)))
	}
	flags, signature := compileOptions(L, name, options(L, name, 3, "options", "signature"))
	if err := m.rt.UserCUDA(); err != nil {
		raise(L, name, err)
	}
	k, err := m.rt.Compile(string(src), string(entry), flags, signature)
	if err != nil {
		raise(L, name, err)
	}
	pushUserData(L, k, kernelType)
	return 1
}

func stringList(L *lua.LState, name, key string, t *lua.LTable) []string {
	if k := otherKey(t, t.Len()); k != lua.LNil {
		badArgument(L, "%s: %s has %s; it is a list of strings, keys 1..n only", name, key, keyText(k))
	}
	var out []string
	for i := 1; i <= t.Len(); i++ {
		s, ok := t.RawGetInt(i).(lua.LString)
		if !ok {
			badArgument(L, "%s: %s[%d] must be a string, got %s", name, key, i, typeName(t.RawGetInt(i)))
		}
		out = append(out, string(s))
	}
	return out
}

// launch is k:launch({grid =, block =, shared =, stream =}, args...).
func launch(L *lua.LState) int {
	const name = "Kernel:launch"
	k := selfOf[launcher](L, kernelKind, "launch")
	opts := options(L, name, 2, "grid", "block", "shared", "stream")
	if L.Get(2) == lua.LNil {
		argError(L, name, 2, "launch configuration expected, e.g. {grid = 128, block = 256}")
	}
	cfg := launchConfig(L, name, opts)
	args := make([]any, 0, L.GetTop()-2)
	for i := 3; i <= L.GetTop(); i++ {
		switch v := L.Get(i).(type) {
		case lua.LNumber:
			args = append(args, float64(v))
		default:
			if a := toArray(L, i); a != nil {
				args = append(args, a)
			} else {
				argError(L, name, i, "DeviceArray or number expected, got %s", typeName(v))
			}
		}
	}
	if err := k.Launch(cfg, args...); err != nil {
		raise(L, name, err)
	}
	return 0
}

// launchConfig reads k:launch's configuration: grid, block, shared
// memory and stream.
func launchConfig(L *lua.LState, name string, opts *lua.LTable) runtime.LaunchConfig {
	cfg := runtime.LaunchConfig{
		Grid:  dims(L, name, opts, "grid"),
		Block: dims(L, name, opts, "block"),
	}
	if v := opts.RawGetString("shared"); v != lua.LNil {
		n, ok := v.(lua.LNumber)
		b, isInt := intOf(float64(n))
		if !ok || !isInt || b < 0 || b > 1<<32-1 {
			badArgument(L, "%s: shared must be a number of bytes, got %s", name, valueText(v))
		}
		cfg.Shared = uint32(b)
	}
	if v := opts.RawGetString("stream"); v != lua.LNil {
		s, ok := userValue[*runtime.Stream](v)
		if !ok {
			badArgument(L, "%s: stream must be a Stream from cuda.stream(), got %s", name, typeName(v))
		}
		cfg.Stream = s
	}
	return cfg
}

// dims reads grid or block: a number or a table of up to three numbers.
func dims(L *lua.LState, name string, opts *lua.LTable, key string) [3]uint32 {
	d := [3]uint32{1, 1, 1}
	bad := func(v lua.LValue) {
		badArgument(L, "%s: %s must be a positive integer or a table of up to 3 of them, got %s", name, key, valueText(v))
	}
	one := func(v lua.LValue) uint32 {
		n, ok := v.(lua.LNumber)
		i, isInt := intOf(float64(n))
		if !ok || !isInt || i < 1 || i > 1<<32-1 {
			bad(v)
		}
		return uint32(i)
	}
	switch v := opts.RawGetString(key).(type) {
	case *lua.LNilType:
		badArgument(L, "%s: the launch configuration needs %s", name, key)
	case lua.LNumber:
		d[0] = one(v)
	case *lua.LTable:
		if v.Len() < 1 || v.Len() > 3 {
			bad(v)
		}
		if k := otherKey(v, v.Len()); k != lua.LNil {
			badArgument(L, "%s: %s has %s; it is a list of up to 3 positive integers, keys 1..n only", name, key, keyText(k))
		}
		for i := 1; i <= v.Len(); i++ {
			d[i-1] = one(v.RawGetInt(i))
		}
	default:
		bad(v)
	}
	return d
}
