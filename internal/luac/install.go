package luac

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/internal/regularfile"
)

// builtins holds the code pointers of gopher-lua's own loaders, taken from
// a scratch state, so that Install recognises them wherever they sit and
// leaves alone anything a host put in their place (a sandbox's wrapper, say).
var builtins = sync.OnceValue(func() map[uintptr]string {
	L := lua.NewState()
	defer L.Close()
	found := map[uintptr]string{}
	for _, name := range []string{"loadstring", "load", "loadfile", "dofile"} {
		if p, ok := goFunc(L.GetGlobal(name)); ok {
			found[p] = name
		}
	}
	// package.loaders is {preload searcher, Lua file searcher} in every
	// gopher-lua release.
	if loaders, ok := L.GetField(L.GetGlobal("package"), "loaders").(*lua.LTable); ok {
		if p, ok := goFunc(loaders.RawGetInt(1)); ok {
			found[p] = preloadSearcher
		}
		if p, ok := goFunc(loaders.RawGetInt(2)); ok {
			found[p] = luaSearcher
		}
	}
	return found
})

const (
	preloadSearcher = "package.loaders[1]"
	luaSearcher     = "package.loaders[2]"
)

func goFunc(v lua.LValue) (uintptr, bool) {
	fn, ok := v.(*lua.LFunction)
	if !ok || !fn.IsG || fn.GFunction == nil {
		return 0, false
	}
	return reflect.ValueOf(fn.GFunction).Pointer(), true
}

var replacements = map[string]lua.LGFunction{
	"loadstring":    loadstring,
	"load":          load,
	"loadfile":      loadfile,
	"dofile":        dofile,
	preloadSearcher: searchPreload,
	luaSearcher:     searchLuaFile,
}

// Install makes L's loadstring, load, loadfile, dofile and require's Lua
// file searcher compile through Load. Each is replaced only where gopher-lua's
// own version is still in place, so a sandbox that removed or wrapped one
// keeps its choice, and calling Install twice is harmless. The replacements
// keep gopher-lua's behaviour: the load family returns nil and a message on
// failure, dofile raises it. They differ from gopher-lua's where Lua 5.1
// does: messages are lua5.1's, chunks are named as Lua 5.1 names them
// (loadstring(s) is [string "s"], load(f) is "=(load)", a file "@path"),
// and loadfile skips a leading '#' line.
func Install(L *lua.LState) {
	if L == nil {
		return
	}
	known := builtins()
	replace := func(v lua.LValue) (lua.LValue, bool) {
		p, ok := goFunc(v)
		if !ok {
			return nil, false
		}
		name, ok := known[p]
		if !ok {
			return nil, false
		}
		return L.NewFunction(replacements[name]), true
	}

	globals := L.G.Global
	for _, name := range []string{"loadstring", "load", "loadfile", "dofile"} {
		if fn, ok := replace(globals.RawGetString(name)); ok {
			globals.RawSetString(name, fn)
		}
	}

	// package.loaders and the registry's _LOADERS, which require reads, are
	// the same table unless a host split them; cover both.
	var tables []*lua.LTable
	if pkg, ok := globals.RawGetString("package").(*lua.LTable); ok {
		if t, ok := pkg.RawGetString("loaders").(*lua.LTable); ok {
			tables = append(tables, t)
		}
	}
	if reg, ok := L.Get(lua.RegistryIndex).(*lua.LTable); ok {
		if t, ok := reg.RawGetString("_LOADERS").(*lua.LTable); ok && (len(tables) == 0 || tables[0] != t) {
			tables = append(tables, t)
		}
	}
	for _, t := range tables {
		for i := 1; i <= t.MaxN(); i++ {
			if fn, ok := replace(t.RawGetInt(i)); ok {
				t.RawSetInt(i, fn)
			}
		}
	}
}

func pushLoaded(L *lua.LState, fn *lua.LFunction, err error) int {
	// A load the deadline stopped stops the script, as the VM would.
	var stop *StoppedError
	if errors.As(err, &stop) {
		L.RaiseError("%s", stop.Error())
	}
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	L.Push(fn)
	return 1
}

// loadstring(s [, chunkname])
func loadstring(L *lua.LState) int {
	src := lua51.CheckString(L, 1)
	fn, err := LoadString(L, src, lua51.OptString(L, 2, src))
	return pushLoaded(L, fn, err)
}

// load(reader [, chunkname]) calls reader until it returns nil or "".
// As lua_load runs the reader inside the parser's protection, an error
// the reader raises, or a piece that is not a string, comes back as nil
// and the message rather than propagating: load(function() error("x")
// end) returns nil, "file:1: x".
func load(L *lua.LState) int {
	reader := L.CheckFunction(1)
	chunkName := lua51.OptString(L, 2, "=(load)")
	top := L.GetTop()
	var pieces []string
	for {
		L.SetTop(top)
		L.Push(reader)
		if err := L.PCall(0, 1, nil); err != nil {
			L.SetTop(top)
			L.Push(lua.LNil)
			if apiErr, ok := err.(*lua.ApiError); ok {
				L.Push(apiErr.Object)
			} else {
				L.Push(lua.LString(err.Error()))
			}
			return 2
		}
		ret := L.Get(-1)
		L.Pop(1)
		if ret == lua.LNil {
			break
		}
		if !lua.LVCanConvToString(ret) {
			L.Push(lua.LNil)
			L.Push(lua.LString(lua51.Where(L, 1) + "reader function must return a string"))
			return 2
		}
		piece := ret.String()
		if piece == "" {
			break
		}
		pieces = append(pieces, piece)
	}
	fn, err := LoadString(L, strings.Join(pieces, ""), chunkName)
	return pushLoaded(L, fn, err)
}

// loadfile([filename]) reads standard input when called without arguments.
func loadfile(L *lua.LState) int {
	if L.GetTop() < 1 {
		r, err := skipHashLine(os.Stdin)
		if err != nil {
			return pushLoaded(L, nil, fileError("read", "stdin", err))
		}
		src, err := io.ReadAll(r)
		if err != nil {
			return pushLoaded(L, nil, fileError("read", "stdin", err))
		}
		fn, err := LoadChunk(L, src, "=stdin", StringLevels)
		return pushLoaded(L, fn, err)
	}
	path := L.CheckString(1)
	f, err := regularfile.Open(path)
	if err != nil {
		return pushLoaded(L, nil, openError(path, err))
	}
	defer f.Close()
	r, err := skipHashLine(f)
	if err != nil {
		return pushLoaded(L, nil, fileError("read", path, err))
	}
	src, err := io.ReadAll(r)
	if err != nil {
		return pushLoaded(L, nil, fileError("read", path, err))
	}
	fn, err := LoadChunk(L, src, "@"+path, StringLevels)
	return pushLoaded(L, fn, err)
}

// dofile([filename]) raises the load error as gopher-lua's does: through
// L.Panic, with the bare message and no position.
func dofile(L *lua.LState) int {
	path := L.ToString(1)
	top := L.GetTop()
	fn, err := loadFile(L, path, StringLevels)
	if err != nil {
		L.Push(lua.LString(err.Error()))
		L.Panic(L)
	}
	L.Push(fn)
	L.Call(0, lua.MultRet)
	return L.GetTop() - top
}

// searchLuaFile is require's searcher for Lua files on package.path,
// loadlib.c's loader_Lua: it returns the loaded chunk, or lua5.1's message
// listing where it looked ("\n\tno file './m.lua'" for each place), which
// require puts after "module 'm' not found:". A file that does not compile
// is "error loading module 'm' from file './m.lua':" and the message.
func searchLuaFile(L *lua.LState) int {
	name := L.CheckString(1)
	path, msg := findFile(L, name)
	if path == "" {
		L.Push(lua.LString(msg))
		return 1
	}
	fn, err := loadFile(L, path, StringLevels)
	if err != nil {
		var stop *StoppedError
		if errors.As(err, &stop) {
			L.RaiseError("%s", stop.Error())
		}
		L.Error(lua.LString(fmt.Sprintf("error loading module '%s' from file '%s':\n\t%s", name, path, err.Error())), 0)
	}
	L.Push(fn)
	return 1
}

// searchPreload is require's first searcher, loadlib.c's loader_preload:
// package.preload[name], or lua5.1's "\n\tno field package.preload['m']".
func searchPreload(L *lua.LState) int {
	name := L.CheckString(1)
	preload, ok := L.GetField(L.GetField(L.Get(lua.EnvironIndex), "package"), "preload").(*lua.LTable)
	if !ok {
		L.RaiseError("package.preload must be a table")
	}
	if v := preload.RawGetString(name); v != lua.LNil {
		L.Push(v)
		return 1
	}
	L.Push(lua.LString(fmt.Sprintf("\n\tno field package.preload['%s']", name)))
	return 1
}

func findFile(L *lua.LState, name string) (string, string) {
	name = strings.ReplaceAll(name, ".", string(os.PathSeparator))
	pathValue, ok := L.GetField(L.GetField(L.Get(lua.EnvironIndex), "package"), "path").(lua.LString)
	if !ok {
		L.RaiseError("package.path must be a string")
	}
	var messages strings.Builder
	for _, pattern := range strings.Split(string(pathValue), ";") {
		if pattern == "" {
			continue // loadlib.c skips empty templates
		}
		candidate := strings.ReplaceAll(pattern, "?", name)
		// stat, not open: opening a named pipe would wait for a writer,
		// where loading refuses one at once
		if _, err := os.Stat(candidate); err == nil {
			return candidate, ""
		}
		fmt.Fprintf(&messages, "\n\tno file '%s'", candidate)
	}
	return "", messages.String()
}
