package lua51

import (
	"runtime"
	"sync"
	"weak"

	lua "github.com/yuin/gopher-lua"
)

// proxyMetatables are the metatables newproxy(true) made, with weak keys:
// newproxy(p) shares p's metatable only where it is one of them, as
// lbaselib.c keeps them in a weak table. gopher-lua's newproxy shared any
// userdata's and took any other value as false.
var proxyMetatables sync.Map // weak.Pointer[lua.LTable] -> struct{}

// baseNewproxy is Lua 5.1's newproxy([false | true | proxy]).
func baseNewproxy(L *lua.LState) int {
	L.SetTop(1)
	ud := L.NewUserData()
	switch v := L.Get(1); {
	case !lua.LVAsBool(v):
	case v == lua.LTrue:
		mt := L.NewTable()
		key := weak.Make(mt)
		proxyMetatables.Store(key, struct{}{})
		runtime.AddCleanup(mt, func(k weak.Pointer[lua.LTable]) { proxyMetatables.Delete(k) }, key)
		ud.Metatable = mt
	default:
		mt, _ := L.GetMetatable(v).(*lua.LTable)
		valid := false
		if mt != nil {
			_, valid = proxyMetatables.Load(weak.Make(mt))
		}
		if !valid {
			argError(L, 1, "newproxy", "boolean or proxy expected")
		}
		ud.Metatable = mt
	}
	L.Push(ud)
	return 1
}
