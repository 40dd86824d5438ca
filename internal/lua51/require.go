package lua51

import (
	lua "github.com/yuin/gopher-lua"
)

// loading marks a module being loaded in package.loaded, as loadlib.c's
// sentinel does: finding it again is a loop, or a load that failed.
var loading = &lua.LUserData{}

// baseRequire is Lua 5.1's require, loadlib.c's ll_require, over the
// registry's _LOADED and _LOADERS that gopher-lua's package library keeps
// (package.loaded and package.loaders). Its messages are lua5.1's:
// "module 'm' not found:" followed by what each searcher said, and "loop
// or previous error loading module 'm'"; gopher-lua's read "module m not
// found:" with a trailing comma and "...loading module: m".
func baseRequire(L *lua.LState) int {
	name := checkString(L, 1)
	reg, _ := L.Get(lua.RegistryIndex).(*lua.LTable)
	loaded, ok := reg.RawGetString("_LOADED").(*lua.LTable)
	if !ok {
		raise(L, "package.loaded must be a table")
	}
	if v := loaded.RawGetString(name); lua.LVAsBool(v) {
		if v == loading {
			raise(L, "loop or previous error loading module '"+name+"'")
		}
		L.Push(v)
		return 1
	}
	loaders, ok := reg.RawGetString("_LOADERS").(*lua.LTable)
	if !ok {
		raise(L, "'package.loaders' must be a table")
	}
	said := ""
	var loader lua.LValue
	for i := 1; ; i++ {
		searcher := loaders.RawGetInt(i)
		if searcher == lua.LNil {
			raise(L, "module '"+name+"' not found:"+said)
		}
		L.Push(searcher)
		L.Push(lua.LString(name))
		L.Call(1, 1)
		r := L.Get(-1)
		L.Pop(1)
		if _, ok := r.(*lua.LFunction); ok {
			loader = r
			break
		}
		if s, ok := asString(r); ok {
			said += s
		}
	}
	loaded.RawSetString(name, loading)
	L.Push(loader)
	L.Push(lua.LString(name))
	L.Call(1, 1)
	if r := L.Get(-1); r != lua.LNil {
		loaded.RawSetString(name, r)
	}
	L.Pop(1)
	if loaded.RawGetString(name) == loading {
		loaded.RawSetString(name, lua.LTrue)
	}
	L.Push(loaded.RawGetString(name))
	return 1
}
