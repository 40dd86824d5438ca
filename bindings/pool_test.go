package bindings

import (
	"errors"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/pool"
	"github.com/gluaproject/glua/runtime"
)

// fakePool is a poolRuntime that records what the module asks of it.
type fakePool struct {
	stats      pool.Stats
	soft, hard runtime.LimitChange
	limitErr   error
	reclaimed  uint64
	peakResets int
	recording  []bool
	dumps      []string // path and title of each DumpProfile
}

func (f *fakePool) Status() string    { return "status line" }
func (f *fakePool) Stats() pool.Stats { return f.stats }
func (f *fakePool) ResetPeak()        { f.peakResets++ }
func (f *fakePool) Reclaim(n uint64) (uint64, error) {
	f.reclaimed = n
	return 42, nil
}
func (f *fakePool) ScriptSetLimits(soft, hard runtime.LimitChange) error {
	f.soft, f.hard = soft, hard
	return f.limitErr
}
func (f *fakePool) Limits() (uint64, uint64)      { return 0, 0 }
func (f *fakePool) Snapshot() []runtime.LiveBlock { return nil }
func (f *fakePool) Report() string                { return "report text" }
func (f *fakePool) Strategy() string              { return "caching" }
func (f *fakePool) PinnedStats() (uint64, uint64, uint64) {
	return 17, 18, 19
}
func (f *fakePool) OverlapTemporaries() (uint64, uint64) { return 20, 21 }
func (f *fakePool) RecordMemory(on bool) error {
	f.recording = append(f.recording, on)
	return nil
}
func (f *fakePool) DumpProfile(path, title string) error {
	f.dumps = append(f.dumps, path, title)
	return nil
}
func (f *fakePool) FileAccess() error { return nil }
func (f *fakePool) Scope(fn func() ([]*runtime.Array, error)) error {
	_, err := fn()
	return err
}

func poolState(t *testing.T, f *fakePool) *lua.LState {
	t.Helper()
	L := lua.NewState()
	t.Cleanup(L.Close)
	L.SetGlobal("pool", L.SetFuncs(L.NewTable(), poolModule{f}.funcs()))
	return L
}

// Every figure of pool.stats() comes from its own field of pool.Stats.
func TestPoolStatsHasEveryFieldFromItsOwnFigure(t *testing.T) {
	f := &fakePool{stats: pool.Stats{
		Used: 1, Requested: 2, Reserved: 3, PeakUsed: 4, PeakReserved: 5, LiveBlocks: 6,
		Allocations: 7, Frees: 8, CacheHits: 9, CacheMisses: 10, Reclaims: 11, OOMRetries: 12,
		SoftLimit: 13, HardLimit: 14, DeviceFree: 15, DeviceTotal: 16,
	}}
	L := poolState(t, f)
	err := L.DoString(`
		local want = {used = 1, requested = 2, reserved = 3, peak_used = 4, peak_reserved = 5, live_arrays = 6,
			allocations = 7, frees = 8, cache_hits = 9, cache_misses = 10, reclaims = 11, oom_retries = 12,
			soft_limit = 13, hard_limit = 14, device_free = 15, device_total = 16,
			pinned_used = 17, pinned_cached = 18, pinned_limit = 19,
			overlap_temporaries = 20, overlap_bytes = 21}
		local s, n = pool.stats(), 0
		for k, v in pairs(s) do
			n = n + 1
			assert(want[k] == v, k .. " = " .. tostring(v))
		end
		assert(n == 21, n .. " fields")`)
	if err != nil {
		t.Fatal(err)
	}
}

func TestPoolModuleConvertsArgumentsForTheRuntime(t *testing.T) {
	f := &fakePool{}
	L := poolState(t, f)
	err := L.DoString(`
		pool.set_limit({soft = "1GiB", hard = false})
		assert(pool.reclaim("1MiB") == 42)
		pool.reset_peak()
		assert(pool.status() == "status line" and pool.report() == "report text" and pool.strategy() == "caching")`)
	if err != nil {
		t.Fatal(err)
	}
	if f.soft != (runtime.LimitChange{Set: true, Value: "1GiB"}) || f.hard != (runtime.LimitChange{Set: true}) {
		t.Errorf("set_limit passed soft %+v, hard %+v", f.soft, f.hard)
	}
	if f.reclaimed != 1<<20 || f.peakResets != 1 {
		t.Errorf("reclaim got %d, reset_peak ran %d times", f.reclaimed, f.peakResets)
	}
}

func TestPoolModuleNamesTheCallInErrors(t *testing.T) {
	f := &fakePool{limitErr: errors.New("hard limit 1 MiB is below the 8 MiB still reserved")}
	L := poolState(t, f)
	err := L.DoString(`pool.set_limit({hard = "1MiB"})`)
	if err == nil || !strings.Contains(err.Error(), "pool.set_limit: hard limit 1 MiB is below") {
		t.Errorf("runtime error: %v", err)
	}
	err = L.DoString(`pool.set_limit({hard = true})`)
	if err == nil || !strings.Contains(err.Error(), "pool.set_limit: hard must be a size, a percentage or false, got true") {
		t.Errorf("bad option: %v", err)
	}
}

// pool.record takes true or false and nothing else; pool.dump_profile a
// path and an optional title, passed on as given.
func TestRecordAndDumpProfileCheckTheirArguments(t *testing.T) {
	f := &fakePool{}
	L := poolState(t, f)
	if err := L.DoString(`pool.record(true) pool.record(false) pool.dump_profile("m.html") pool.dump_profile("n.html", "job")`); err != nil {
		t.Fatal(err)
	}
	if len(f.recording) != 2 || !f.recording[0] || f.recording[1] {
		t.Errorf("RecordMemory got %v; want [true false]", f.recording)
	}
	if want := []string{"m.html", "", "n.html", "job"}; strings.Join(f.dumps, "|") != strings.Join(want, "|") {
		t.Errorf("DumpProfile got %q; want %q", f.dumps, want)
	}
	for _, c := range []struct{ code, want string }{
		{`pool.record()`, "pool.record: bad argument #1 (true or false expected, got nil)"},
		{`pool.record(1)`, "pool.record: bad argument #1 (true or false expected, got number)"},
		{`pool.dump_profile()`, "pool.dump_profile: bad argument #1 (path must be a string, got nil)"},
		{`pool.dump_profile("")`, "pool.dump_profile: bad argument #1 (path is empty)"},
		{`pool.dump_profile("m.html", 3)`, "pool.dump_profile: bad argument #2 (title must be a string, got number)"},
	} {
		err := L.DoString(c.code)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error containing %q", c.code, err, c.want)
		}
	}
}
