package runtime

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/internal/luac"
	"github.com/gluaproject/glua/internal/lualimit"
)

// The Lua value stack starts at gopher-lua's default size. It grows by a
// fixed step, copying itself each time, so a small step makes pushing a
// million values (unpack of a big table) quadratic: 64Ki slots is 1 MiB.
const (
	initialStackSlots = 5120
	stackGrowStep     = 1 << 16
)

func (rt *Runtime) newLuaState(opts Options) *lua.LState {
	L := lua.NewState(lua.Options{
		SkipOpenLibs: opts.Sandbox,
		// Both stacks start small and grow as the script needs them, up to
		// the configured bounds; gopher-lua's fixed defaults (256 calls,
		// 5120 values) stop ordinary recursion and big table.concat or
		// unpack calls.
		CallStackSize:       rt.cfg.Lua.CallDepth,
		MinimizeStackMemory: true,
		RegistrySize:        min(initialStackSlots, rt.cfg.Lua.StackSlots),
		RegistryMaxSize:     rt.cfg.Lua.StackSlots,
		RegistryGrowStep:    stackGrowStep,
	})
	if opts.Sandbox {
		openSandboxLibs(L)
	}
	if opts.Context != nil {
		L.SetContext(causeContext{opts.Context})
	}
	L.SetGlobal("print", L.NewFunction(rt.script.print))
	// Where gopher-lua's library and protected calls differ from Lua 5.1,
	// lua51's replacements stand in; collectgarbage and the coroutine
	// functions are then wrapped.
	lua51.Open(L)
	rt.wrapCollectGarbage(L)
	followContexts(L)
	// gopher-lua's compiler miscompiles ordinary Lua (multiple assignment,
	// and/or into locals, jumps to jumps); every chunk glua loads goes
	// through luac, glua's own compiler.
	luac.Install(L)
	// A script's strings, tables and coroutines stay within [lua]
	// memory_limit, and long library calls end at the context's deadline.
	lualimit.Install(L, rt.script.luaMemory)
	modulesMu.Lock()
	registered := append([]Module(nil), modules...)
	modulesMu.Unlock()
	for _, m := range registered {
		L.PreloadModule(m.Name, func(L *lua.LState) int { return m.Open(rt, L) })
	}
	if len(registered) == 0 {
		addMissingModulesHint(L)
	}
	return L
}

// addMissingModulesHint makes require's "module not found" say what a
// program with no glua module linked lacks: a searcher's message is
// appended to the error, as in Lua 5.1.
func addMissingModulesHint(L *lua.LState) {
	loaders, ok := L.GetField(L.Get(lua.RegistryIndex), "_LOADERS").(*lua.LTable)
	if !ok {
		return
	}
	loaders.Append(L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString("no glua module is linked into this program: import _ \"github.com/gluaproject/glua/bindings\""))
		return 1
	}))
}

// openSandboxLibs opens only libraries that cannot touch the host: no os, no
// io, no debug, no dofile/loadfile, and require finds only preloaded
// modules. Nothing loads bytecode: gopher-lua's load and loadstring read
// only source, and string.dump, which could only fail, is left out.
func openSandboxLibs(L *lua.LState) {
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.LoadLibName, lua.OpenPackage},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	for _, name := range []string{"dofile", "loadfile"} {
		L.SetGlobal(name, lua.LNil)
	}
	L.SetField(L.GetGlobal("string"), "dump", lua.LNil)
	pkg := L.GetGlobal("package").(*lua.LTable)
	loaders := pkg.RawGetString("loaders").(*lua.LTable)
	onlyPreload := L.NewTable()
	onlyPreload.Append(loaders.RawGetInt(1)) // the preload searcher comes first
	pkg.RawSetString("loaders", onlyPreload)
	L.SetField(L.Get(lua.RegistryIndex), "_LOADERS", onlyPreload)
	pkg.RawSetString("loadlib", lua.LNil)
	pkg.RawSetString("path", lua.LString(""))
	pkg.RawSetString("cpath", lua.LString(""))
}

// wrapCollectGarbage makes collectgarbage("collect") also return the
// memory of arrays that became unreachable, so that a script which calls it
// sees the pool shrink at once rather than at its next allocation.
func (rt *Runtime) wrapCollectGarbage(L *lua.LState) {
	orig, ok := L.GetGlobal("collectgarbage").(*lua.LFunction)
	if !ok {
		return
	}
	L.SetGlobal("collectgarbage", L.NewFunction(func(L *lua.LState) int {
		opt := L.OptString(1, "collect")
		if opt == "collect" {
			rt.collect()
			L.Push(lua.LNumber(0))
			return 1
		}
		if orig.IsG {
			// Called in this frame, an argument error names the function
			// as the script called it, as a direct call would.
			return orig.GFunction(L)
		}
		top := L.GetTop()
		L.Push(orig)
		for i := 1; i <= top; i++ {
			L.Push(L.Get(i))
		}
		L.Call(top, lua.MultRet)
		return L.GetTop() - top
	}))
}

// Lua is the runtime's Lua state, for what SetGlobal, Global and Call do
// not cover: building tables, gopher-lua's own API.
func (rt *Runtime) Lua() *lua.LState { return rt.L }

// DoString runs Lua source. While it runs, another goroutine's DoString,
// DoFile, Call, SetGlobal or Global returns ErrInUse, and Close stops the
// script at its next instruction, waits for it, and closes the runtime:
// DoString then returns ErrClosed.
func (rt *Runtime) DoString(source string) error {
	leave, err := rt.enter()
	if err != nil {
		return err
	}
	defer leave()
	fn, err := luac.LoadString(rt.L, source, "=<string>")
	if err != nil {
		return err
	}
	return rt.stoppedByClose(rt.call(fn))
}

// DoFile runs a Lua file, as DoString runs source.
func (rt *Runtime) DoFile(path string) error {
	leave, err := rt.enter()
	if err != nil {
		return err
	}
	defer leave()
	fn, err := luac.LoadFile(rt.L, path)
	if err != nil {
		return err
	}
	return rt.stoppedByClose(rt.call(fn))
}

func (rt *Runtime) call(fn *lua.LFunction) error {
	rt.L.G.Registry.RawSetString(raisedKey, lua.LNil)
	rt.L.Push(fn)
	if err := lua51.PCall(rt.L, 0, lua.MultRet, nil); err != nil {
		return rt.scriptError(err)
	}
	return nil
}
