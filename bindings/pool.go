package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/pool"
	"github.com/gluaproject/glua/runtime"
)

// poolRuntime is what the pool module needs from a runtime.
type poolRuntime interface {
	Status() string
	Stats() pool.Stats
	ResetPeak()
	Reclaim(nbytes uint64) (uint64, error)
	ScriptSetLimits(soft, hard runtime.LimitChange) error
	Limits() (soft, hard uint64)
	Snapshot() []runtime.LiveBlock
	Report() string
	Scope(fn func() ([]*runtime.Array, error)) error
	Strategy() string
	PinnedStats() (live, cached, limit uint64)
	OverlapTemporaries() (n, nbytes uint64)
	RecordMemory(on bool) error
	DumpProfile(path, title string) error
	FileAccess() error
}

// poolModule is the pool module: limits, statistics and ways to give memory
// back. One method per Lua function; funcs is its table.
type poolModule struct{ rt poolRuntime }

func (m poolModule) funcs() map[string]lua.LGFunction {
	return map[string]lua.LGFunction{
		"status":       m.status,
		"stats":        m.stats,
		"reset_peak":   m.resetPeak,
		"reclaim":      m.reclaim,
		"set_limit":    m.setLimit,
		"limits":       m.limits,
		"free":         m.free,
		"snapshot":     m.snapshot,
		"report":       m.report,
		"scope":        m.scope,
		"strategy":     m.strategy,
		"record":       m.record,
		"dump_profile": m.dumpProfile,
	}
}

// openPool is the loader of the pool module.
func openPool(rt *runtime.Runtime, L *lua.LState) int {
	registerArrayTypes(rt, L)
	L.Push(strictModule(L, "pool", L.SetFuncs(L.NewTable(), poolModule{rt}.funcs())))
	return 1
}

func (m poolModule) status(L *lua.LState) int {
	L.Push(lua.LString(m.rt.Status()))
	return 1
}

// statsFields are pool.stats()'s keys, each with its figure.
var statsFields = []struct {
	key string
	get func(pool.Stats) uint64
}{
	{"used", func(s pool.Stats) uint64 { return s.Used }},
	{"requested", func(s pool.Stats) uint64 { return s.Requested }},
	{"reserved", func(s pool.Stats) uint64 { return s.Reserved }},
	{"peak_used", func(s pool.Stats) uint64 { return s.PeakUsed }},
	{"peak_reserved", func(s pool.Stats) uint64 { return s.PeakReserved }},
	{"live_arrays", func(s pool.Stats) uint64 { return uint64(s.LiveBlocks) }},
	{"allocations", func(s pool.Stats) uint64 { return s.Allocations }},
	{"frees", func(s pool.Stats) uint64 { return s.Frees }},
	{"cache_hits", func(s pool.Stats) uint64 { return s.CacheHits }},
	{"cache_misses", func(s pool.Stats) uint64 { return s.CacheMisses }},
	{"reclaims", func(s pool.Stats) uint64 { return s.Reclaims }},
	{"oom_retries", func(s pool.Stats) uint64 { return s.OOMRetries }},
	{"soft_limit", func(s pool.Stats) uint64 { return s.SoftLimit }},
	{"hard_limit", func(s pool.Stats) uint64 { return s.HardLimit }},
	{"device_free", func(s pool.Stats) uint64 { return s.DeviceFree }},
	{"device_total", func(s pool.Stats) uint64 { return s.DeviceTotal }},
}

func (m poolModule) stats(L *lua.LState) int {
	s := m.rt.Stats()
	t := L.CreateTable(0, len(statsFields)+5)
	for _, f := range statsFields {
		t.RawSetString(f.key, lua.LNumber(f.get(s)))
	}
	// Page-locked host memory is the runtime's, beside the pool's.
	live, cached, limit := m.rt.PinnedStats()
	t.RawSetString("pinned_used", lua.LNumber(live))
	t.RawSetString("pinned_cached", lua.LNumber(cached))
	t.RawSetString("pinned_limit", lua.LNumber(limit))
	// So are the temporaries partly overlapping calls took from the pool.
	n, nbytes := m.rt.OverlapTemporaries()
	t.RawSetString("overlap_temporaries", lua.LNumber(n))
	t.RawSetString("overlap_bytes", lua.LNumber(nbytes))
	L.Push(t)
	return 1
}

func (m poolModule) resetPeak(L *lua.LState) int {
	m.rt.ResetPeak()
	return 0
}

func (m poolModule) reclaim(L *lua.LState) int {
	const name = "pool.reclaim"
	var want uint64
	if L.Get(1) != lua.LNil {
		want = checkSize(L, name, 1)
	}
	n, err := m.rt.Reclaim(want)
	if err != nil {
		raise(L, name, err)
	}
	L.Push(lua.LNumber(n))
	return 1
}

func (m poolModule) setLimit(L *lua.LState) int {
	const name = "pool.set_limit"
	opts := options(L, name, 1, "soft", "hard")
	if L.Get(1) == lua.LNil {
		argError(L, name, 1, "table expected, e.g. {soft = \"2GiB\", hard = \"90%%\"}")
	}
	soft := limitChange(L, name, opts, "soft")
	hard := limitChange(L, name, opts, "hard")
	if err := m.rt.ScriptSetLimits(soft, hard); err != nil {
		raise(L, name, err)
	}
	return 0
}

func (m poolModule) limits(L *lua.LState) int {
	soft, hard := m.rt.Limits()
	t := L.NewTable()
	t.RawSetString("soft", limitValue(soft))
	t.RawSetString("hard", limitValue(hard))
	L.Push(t)
	return 1
}

func (m poolModule) free(L *lua.LState) int {
	const name = "pool.free"
	if err := checkArray(L, name, 1).Free(); err != nil {
		raise(L, name, err)
	}
	return 0
}

func (m poolModule) snapshot(L *lua.LState) int {
	t := L.NewTable()
	for _, b := range m.rt.Snapshot() {
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
}

func (m poolModule) report(L *lua.LState) int {
	L.Push(lua.LString(m.rt.Report()))
	return 1
}

func (m poolModule) strategy(L *lua.LState) int {
	L.Push(lua.LString(m.rt.Strategy()))
	return 1
}

// record is pool.record(on): start or stop recording memory events.
func (m poolModule) record(L *lua.LState) int {
	const name = "pool.record"
	on, ok := L.Get(1).(lua.LBool)
	if !ok {
		argError(L, name, 1, "true or false expected, got %s", typeName(L.Get(1)))
	}
	if err := m.rt.RecordMemory(bool(on)); err != nil {
		raise(L, name, err)
	}
	return 0
}

// dumpProfile is pool.dump_profile(path [, title]): the recording as an
// HTML page; the title defaults to the calling script's name.
func (m poolModule) dumpProfile(L *lua.LState) int {
	const name = "pool.dump_profile"
	path := checkPath(L, name, 1)
	var title string
	switch v := L.Get(2).(type) {
	case *lua.LNilType:
	case lua.LString:
		title = string(v)
	default:
		argError(L, name, 2, "title must be a string, got %s", typeName(v))
	}
	if err := m.rt.FileAccess(); err != nil {
		raise(L, name, err)
	}
	if err := m.rt.DumpProfile(path, title); err != nil {
		raise(L, name, err)
	}
	return 0
}

// checkSize reads a size argument: bytes or a string with units.
func checkSize(L *lua.LState, name string, n int) uint64 {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		b, ok := intOf(float64(v))
		if !ok || b < 0 {
			argError(L, name, n, "size must be a non-negative whole number of bytes, got %s", valueText(v))
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
			badArgument(L, "%s: %s must be a positive whole number of bytes, got %s", name, key, valueText(v))
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
func (m poolModule) scope(L *lua.LState) int {
	const name = "pool.scope"
	fn, ok := L.Get(1).(*lua.LFunction)
	if !ok {
		argError(L, name, 1, "function expected, got %s", typeName(L.Get(1)))
	}
	nargs := L.GetTop() - 1
	base := L.GetTop()
	var nret int
	err := m.rt.Scope(func() ([]*runtime.Array, error) {
		L.Push(fn)
		for i := 2; i <= base; i++ {
			L.Push(L.Get(i))
		}
		// A Lua error here unwinds through Scope, which frees on the way.
		L.Call(nargs, lua.MultRet)
		nret = L.GetTop() - base
		return returnedArrays(L, base), nil
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
