package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/runtime"
)

// openPool is the loader of the pool module: limits, statistics and ways to
// give memory back.
func openPool(rt *runtime.Runtime, L *lua.LState) int {
	registerArrayTypes(rt, L)
	mod := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"status": func(L *lua.LState) int {
			L.Push(lua.LString(rt.Status()))
			return 1
		},
		"stats": func(L *lua.LState) int {
			s := rt.Stats()
			t := L.NewTable()
			for k, v := range map[string]uint64{
				"used": s.Used, "reserved": s.Reserved, "peak_used": s.PeakUsed, "peak_reserved": s.PeakReserved,
				"allocations": s.Allocations, "frees": s.Frees, "cache_hits": s.CacheHits, "cache_misses": s.CacheMisses,
				"reclaims": s.Reclaims, "oom_retries": s.OOMRetries, "soft_limit": s.SoftLimit, "hard_limit": s.HardLimit,
				"device_free": s.DeviceFree, "device_total": s.DeviceTotal, "live_arrays": uint64(s.LiveBlocks),
				"requested": s.Requested,
			} {
				t.RawSetString(k, lua.LNumber(v))
			}
			L.Push(t)
			return 1
		},
		"reset_peak": func(L *lua.LState) int {
			rt.Pool().ResetPeak()
			return 0
		},
		"reclaim": func(L *lua.LState) int {
			const name = "pool.reclaim"
			var want uint64
			if L.Get(1) != lua.LNil {
				want = checkSize(L, name, 1)
			}
			n, err := rt.Reclaim(want)
			if err != nil {
				raise(L, name, err)
			}
			L.Push(lua.LNumber(n))
			return 1
		},
		"set_limit": func(L *lua.LState) int {
			const name = "pool.set_limit"
			opts := options(L, name, 1, "soft", "hard")
			if L.Get(1) == lua.LNil {
				argError(L, name, 1, "table expected, e.g. {soft = \"2GiB\", hard = \"90%%\"}")
			}
			soft := limitChange(L, name, opts, "soft")
			hard := limitChange(L, name, opts, "hard")
			if err := rt.SetLimits(soft, hard); err != nil {
				raise(L, name, err)
			}
			return 0
		},
		"limits": func(L *lua.LState) int {
			soft, hard := rt.Limits()
			t := L.NewTable()
			t.RawSetString("soft", limitValue(soft))
			t.RawSetString("hard", limitValue(hard))
			L.Push(t)
			return 1
		},
		"free": func(L *lua.LState) int {
			const name = "pool.free"
			if err := checkArray(L, name, 1).Free(); err != nil {
				raise(L, name, err)
			}
			return 0
		},
		"snapshot": func(L *lua.LState) int {
			t := L.NewTable()
			for _, b := range rt.Snapshot() {
				e := L.NewTable()
				e.RawSetString("id", lua.LNumber(b.ID))
				e.RawSetString("nbytes", lua.LNumber(b.NBytes))
				e.RawSetString("dtype", lua.LString(b.DType.String()))
				e.RawSetString("shape", shapeTable(L, b.Shape))
				e.RawSetString("stream", lua.LNumber(b.Stream))
				e.RawSetString("site", lua.LString(b.Site))
				t.Append(e)
			}
			L.Push(t)
			return 1
		},
		"report": func(L *lua.LState) int {
			L.Push(lua.LString(rt.Report()))
			return 1
		},
		"scope":    func(L *lua.LState) int { return scope(rt, L) },
		"strategy": func(L *lua.LState) int { L.Push(lua.LString(rt.Pool().Strategy())); return 1 },
	})
	L.Push(mod)
	return 1
}

// checkSize reads a size argument: bytes or a string with units.
func checkSize(L *lua.LState, name string, n int) uint64 {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		b, ok := intOf(float64(v))
		if !ok || b < 0 {
			argError(L, name, n, "size must be a non-negative whole number of bytes, got %v", v)
		}
		return uint64(b)
	case lua.LString:
		b, err := config.ParseSize(string(v))
		if err != nil {
			argError(L, name, n, "%s", err)
		}
		return b
	default:
		argError(L, name, n, "size expected (bytes or a string such as \"512MiB\"), got %s", typeName(v))
		return 0
	}
}

// limitChange reads one limit of set_limit: a size, a percentage, or false
// to clear it.
func limitChange(L *lua.LState, name string, opts *lua.LTable, key string) runtime.LimitChange {
	switch v := opts.RawGetString(key).(type) {
	case *lua.LNilType:
		return runtime.LimitChange{}
	case lua.LBool:
		if v {
			badArgument(L, "%s: %s must be a size, a percentage or false, got true", name, key)
		}
		return runtime.LimitChange{Set: true}
	case lua.LNumber:
		b, ok := intOf(float64(v))
		if !ok || b <= 0 {
			badArgument(L, "%s: %s must be a positive whole number of bytes, got %v", name, key, v)
		}
		return runtime.LimitChange{Set: true, Value: lua.LVAsString(v)}
	case lua.LString:
		if v == "" {
			badArgument(L, "%s: %s is empty; use false to clear a limit", name, key)
		}
		return runtime.LimitChange{Set: true, Value: string(v)}
	default:
		badArgument(L, "%s: %s must be a size, a percentage or false, got %s", name, key, typeName(v))
		return runtime.LimitChange{}
	}
}

func limitValue(n uint64) lua.LValue {
	if n == 0 {
		return lua.LFalse
	}
	return lua.LNumber(n)
}

// scope is pool.scope(fn, ...): call fn and free every array it allocated
// that it does not return, also when fn raises an error.
func scope(rt *runtime.Runtime, L *lua.LState) int {
	const name = "pool.scope"
	fn, ok := L.Get(1).(*lua.LFunction)
	if !ok {
		argError(L, name, 1, "function expected, got %s", typeName(L.Get(1)))
	}
	nargs := L.GetTop() - 1
	base := L.GetTop()
	var nret int
	err := rt.Scope(func() ([]*runtime.Array, error) {
		L.Push(fn)
		for i := 2; i <= base; i++ {
			L.Push(L.Get(i))
		}
		// A Lua error here unwinds through Scope, which frees on the way.
		L.Call(nargs, lua.MultRet)
		nret = L.GetTop() - base
		var keep []*runtime.Array
		seen := map[*lua.LTable]bool{}
		for i := base + 1; i <= L.GetTop(); i++ {
			keep = collectArrays(L.Get(i), seen, keep)
		}
		return keep, nil
	})
	if err != nil {
		raise(L, name, err)
	}
	return nret
}

// collectArrays finds the DeviceArrays in a returned value, looking inside
// tables, so that `return {a, b}` keeps both.
func collectArrays(v lua.LValue, seen map[*lua.LTable]bool, out []*runtime.Array) []*runtime.Array {
	switch v := v.(type) {
	case *lua.LUserData:
		if a, ok := v.Value.(*runtime.Array); ok {
			out = append(out, a)
		}
	case *lua.LTable:
		if seen[v] {
			return out
		}
		seen[v] = true
		v.ForEach(func(_, x lua.LValue) { out = collectArrays(x, seen, out) })
	}
	return out
}
