package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/luac"
)

// mapFn is kernels.map(fn, out, ...): out[i] = fn(a[i], b[i], ...) in one
// kernel, numbers broadcast.
func (m kernelsModule) mapFn(L *lua.LState) int {
	const name = "kernels.map"
	fn, ok := L.Get(1).(*lua.LFunction)
	if !ok {
		argError(L, name, 1, "a Lua function expected, got %s", typeName(L.Get(1)))
	}
	tree, ok := luac.FunctionTree(fn)
	if !ok {
		argError(L, name, 1, "a function written in a script is expected (a Go function, or one compiled outside glua's loader, has no source to translate)")
	}
	out := checkArray(L, name, 2)
	args := make([]any, 0, L.GetTop()-2)
	for n := 3; n <= L.GetTop(); n++ {
		switch v := L.Get(n).(type) {
		case lua.LNumber:
			args = append(args, float64(v))
		default:
			args = append(args, checkArray(L, name, n))
		}
	}
	if err := m.rt.Map(tree, fn.Proto.SourceName, out, args); err != nil {
		raise(L, name, err)
	}
	L.Push(L.Get(2))
	return 1
}
