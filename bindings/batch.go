package bindings

import (
	"errors"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/batch"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/runtime"
)

// batchModule is the batch module: moving work and data through the
// device in pieces that fit. One method per Lua function; funcs is its
// table.
type batchModule struct{ rt *runtime.Runtime }

func (m batchModule) funcs() map[string]lua.LGFunction {
	return map[string]lua.LGFunction{
		"find_size": m.findSize,
		"chunks":    m.chunks,
		"iter":      m.iter,
		"matmul":    m.matmul,
	}
}

func openBatch(rt *runtime.Runtime, L *lua.LState) int {
	registerArrayTypes(rt, L) // its loops hand out arrays before cuda may be required
	registerBatchIterType(L)
	L.Push(strictModule(L, "batch", L.SetFuncs(L.NewTable(), batchModule{rt}.funcs())))
	return 1
}

// findSize is batch.find_size(fn [, {start =, min =}]): the largest n,
// halving from start, for which fn(n) runs without running out of memory,
// followed by what fn returned then.
func (m batchModule) findSize(L *lua.LState) int {
	const name = "batch.find_size"
	fn, ok := L.Get(1).(*lua.LFunction)
	if !ok {
		argError(L, name, 1, "function expected, got %s", typeName(L.Get(1)))
	}
	opts := options(L, name, 2, "start", "min")
	start, lo := optCount(L, name, opts, "start", batch.DefaultStart), optCount(L, name, opts, "min", 1)
	base := L.GetTop()
	n, err := batch.FindSize(m.rt, start, lo, func(n int) ([]*runtime.Array, error) {
		L.SetTop(base)
		L.Push(fn)
		L.Push(lua.LNumber(n))
		if err := lua51.PCall(L, 1, lua.MultRet, nil); err != nil {
			return nil, m.rt.WrapLuaError(err)
		}
		return returnedArrays(L, base), nil
	})
	var se *runtime.ScriptError
	if errors.As(err, &se) && !errors.Is(err, device.ErrOutOfMemory) {
		L.SetTop(base)
		L.Error(se.Lua.Object, 0) // fn's own error, as fn raised it
	}
	if err != nil {
		raise(L, name, err)
	}
	L.Insert(lua.LNumber(n), base+1)
	return L.GetTop() - base
}

// chunks is batch.chunks(h, rows [, {shard = false}]): a list of views of
// rows rows of h each, this rank's share of them with shard.
func (m batchModule) chunks(L *lua.LState) int {
	const name = "batch.chunks"
	h := checkHost(L, name, 1)
	rows := checkInt(L, name, 2, "rows")
	shard := optShard(L, name, options(L, name, 3, "shard"))
	views, err := batch.Chunks(h, rows)
	if err != nil {
		argError(L, name, 2, "%s", err)
	}
	views = batch.Of(shard, views)
	t := L.CreateTable(len(views), 0)
	for _, v := range views {
		pushHost(L, v)
		t.Append(L.Get(-1))
		L.Pop(1)
	}
	L.Push(t)
	return 1
}

// optCount reads an option that must be a positive integer.
func optCount(L *lua.LState, name string, t *lua.LTable, key string, def int) int {
	v := optNumber(L, name, t, key, float64(def))
	n, ok := intOf(v)
	if !ok || n < 1 {
		badArgument(L, "%s: option %s must be a positive integer, got %s", name, key, lua51.NumberString(v))
	}
	return n
}

// returnedArrays are the DeviceArrays among the values above base, looking
// inside tables, so that a scope keeps what a function returned.
func returnedArrays(L *lua.LState, base int) []*runtime.Array {
	var keep []*runtime.Array
	seen := map[*lua.LTable]bool{}
	for i := base + 1; i <= L.GetTop(); i++ {
		keep = collectArrays(L.Get(i), seen, keep)
	}
	return keep
}
