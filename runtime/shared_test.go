package runtime_test

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

const mib = 1 << 20

// newShared is a shared CPU backend and pool with the built-in
// configuration, whatever config.toml or GLUA_* the machine has.
func newShared(t testing.TB, opts runtime.Options) *runtime.Shared {
	t.Helper()
	s, err := runtime.NewShared(cpuOptions(opts, "512MiB"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newTenant is a runtime on s with the built-in configuration.
func newTenant(t testing.TB, s *runtime.Shared, opts runtime.Options) *runtime.Runtime {
	t.Helper()
	c := config.Default()
	opts.Config = &c
	opts.Shared = s
	return mustNew(t, opts)
}

// TestSharedPoolKeepsEachRuntimesQuota runs four runtimes on one pool, each
// on its own goroutine, allocating, computing and dropping arrays (many left
// to the garbage collector, which only fits in the quota if the runtime's
// own cleanups return them) while checking its quota. Run it with -race.
func TestSharedPoolKeepsEachRuntimesQuota(t *testing.T) {
	s := newShared(t, runtime.Options{HardLimit: "256MiB"})
	quotas := []int{24, 32, 40, 48} // MiB
	rts := make([]*runtime.Runtime, len(quotas))
	for i, q := range quotas {
		rts[i] = newTenant(t, s, runtime.Options{HardLimit: fmt.Sprintf("%dMiB", q)})
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(rts))
	for i, rt := range rts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- rt.DoString(fmt.Sprintf(`
				local cuda, kernels, pool = require("cuda"), require("kernels"), require("pool")
				local quota = %d * 1024 * 1024
				local A = cuda.full({32, 16}, 1)
				local B = cuda.full({16, 8}, 2)
				local C = cuda.zeros({32, 8})
				for i = 1, 150 do
					local big = cuda.zeros({1024, 1024})      -- 4 MiB, left to the GC
					kernels.fill(big, i)
					if i %% 4 == 0 then big:free() end
					local x = cuda.rand({64, 64}, "float32", %d + i) -- dropped too
					kernels.matmul(C, A, B)
					assert(kernels.sum(C) == 32 * 8 * 32, "matmul gave " .. kernels.sum(C))
					local st = pool.stats()
					assert(st.used <= quota, "used " .. st.used .. " over the quota")
					assert(st.hard_limit == quota, "hard_limit " .. st.hard_limit)
					if i %% 50 == 0 then
						-- More than the quota: fails with the OOM message
						-- naming this runtime's limit, whatever the others hold.
						local ok, err = pcall(cuda.zeros, {quota / 4 + 1024})
						assert(not ok, "allocation over the quota succeeded")
						assert(string.find(err, "out of CPU backend memory", 1, true), err)
						assert(string.find(err, "hard limit %d.00 MiB", 1, true), err)
					end
				end
				assert(pool.limits().hard == quota)`, quotas[i], i*1000, quotas[i]))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		return
	}
	for i, rt := range rts {
		// 150 arrays of 4 MiB, most of them dropped, fit in the quota only
		// because the ladder ran the runtime's own collection.
		if st := rt.Stats(); st.OOMRetries == 0 || st.Allocations < 300 {
			t.Errorf("runtime %d: %d allocations, %d OOM retries; want its GC rung used", i, st.Allocations, st.OOMRetries)
		}
		if err := rt.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Runtimes(); n != 0 {
		t.Fatalf("%d runtimes still registered after all closed", n)
	}
	st := s.Stats()
	if st.Used != 0 || st.LiveBlocks != 0 || st.Requested != 0 {
		t.Fatalf("shared pool after every runtime closed: %d bytes in %d live blocks", st.Used, st.LiveBlocks)
	}
	if _, err := s.Pool().Reclaim(0); err != nil {
		t.Fatal(err)
	}
	if free, total, err := s.Backend().MemInfo(); err != nil || free != total {
		t.Fatalf("backend lends %d bytes after the cache was reclaimed (%v)", total-free, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOverQuotaFailsWhileAnotherRuntimeCanAllocate(t *testing.T) {
	s := newShared(t, runtime.Options{})
	a := newTenant(t, s, runtime.Options{HardLimit: "16MiB"})
	b := newTenant(t, s, runtime.Options{HardLimit: "64MiB"})
	held, err := a.DeviceArray([]int{3*mib + mib/2}, runtime.Float32) // 14 MiB
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.DeviceArray([]int{mib}, runtime.Float32) // 4 more: over 16
	if !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("allocation past the quota: %v", err)
	}
	for _, want := range []string{"tried to allocate 4.00 MiB", "hard limit 16.00 MiB", "14.00 MiB in use by 1 array"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("OOM message %q lacks %q", err, want)
		}
	}
	if _, err := b.DeviceArray([]int{8 * mib}, runtime.Float32); err != nil { // 32 MiB
		t.Fatalf("the other runtime cannot allocate: %v", err)
	}
	if held.IsFreed() {
		t.Fatal("the OOM touched a live array")
	}
}

func TestSharedHardLimitCapsAllRuntimesTogether(t *testing.T) {
	s := newShared(t, runtime.Options{HardLimit: "64MiB"})
	a := newTenant(t, s, runtime.Options{HardLimit: "48MiB"})
	b := newTenant(t, s, runtime.Options{HardLimit: "48MiB"})
	held, err := a.DeviceArray([]int{10 * mib}, runtime.Float32) // 40 MiB
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.DeviceArray([]int{10 * mib}, runtime.Float32)
	if !errors.Is(err, device.ErrOutOfMemory) || !strings.Contains(err.Error(), "hard limit 64.00 MiB") {
		t.Fatalf("allocation past the shared limit, within the quota: %v", err)
	}
	if _, err := b.DeviceArray([]int{4 * mib}, runtime.Float32); err != nil { // 16 MiB still fits
		t.Fatal(err)
	}
	goruntime.KeepAlive(held)
}

func TestSharedCloseRefusesWhileARuntimeIsOpen(t *testing.T) {
	s := newShared(t, runtime.Options{})
	rt := newTenant(t, s, runtime.Options{})
	x, _ := rt.Full([]int{256}, 3, runtime.Float32)
	err := s.Close()
	if !errors.Is(err, runtime.ErrSharedInUse) || !strings.Contains(err.Error(), "1 open runtime") {
		t.Fatalf("Close with a runtime open: %v", err)
	}
	// Nothing was closed: the runtime carries on.
	if sum, err := rt.Sum(x); err != nil || sum != 768 {
		t.Fatalf("array after the refused Close: %v %v", sum, err)
	}
	if err := rt.DoString(`local y = require("cuda").ones({8}); assert(require("kernels").sum(y) == 8)`); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close after the runtime closed: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	c := config.Default()
	if _, err := runtime.New(runtime.Options{Config: &c, Shared: s}); err == nil || !strings.Contains(err.Error(), "Options.Shared is closed") {
		t.Fatalf("New on a closed shared pool: %v", err)
	}
}

func TestOptionsThatConflictWithTheSharedPoolAreErrors(t *testing.T) {
	s := newShared(t, runtime.Options{CPUMemory: "256MiB", CPUThreads: 2})
	for _, tc := range []struct {
		opts runtime.Options
		want string
	}{
		{runtime.Options{Backend: "cuda"}, "Options.Backend"},
		{runtime.Options{MemoryPool: "none"}, "Options.MemoryPool"},
		{runtime.Options{Device: 1}, "Options.Device"},
		{runtime.Options{CPUMemory: "1GiB"}, "Options.CPUMemory"},
		{runtime.Options{CPUThreads: 3}, "Options.CPUThreads"},
	} {
		c := config.Default()
		tc.opts.Config, tc.opts.Shared = &c, s
		rt, err := runtime.New(tc.opts)
		if err == nil {
			rt.Close()
			t.Errorf("%+v: no error", tc.opts)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %q does not name %s", err, tc.want)
		}
	}
	// Options that say what the shared pool already is are accepted.
	rt := newTenant(t, s, runtime.Options{Backend: "cpu", MemoryPool: "caching", CPUMemory: "268435456", CPUThreads: 2})
	if rt.BackendName() != "cpu" || rt.Shared() != s {
		t.Fatalf("runtime on %s, shared %p", rt.BackendName(), rt.Shared())
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if n := s.Runtimes(); n != 0 {
		t.Fatalf("failed New calls left %d runtimes registered", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.NewShared(runtime.Options{Shared: s}); err == nil || !strings.Contains(err.Error(), "Options.Shared") {
		t.Fatalf("NewShared on a shared pool: %v", err)
	}
}

func TestSharedRuntimeSeesItsOwnStatsAndLimits(t *testing.T) {
	s := newShared(t, runtime.Options{HardLimit: "200MiB"})
	a := newTenant(t, s, runtime.Options{HardLimit: "64MiB"})
	b := newTenant(t, s, runtime.Options{HardLimit: "32MiB"})
	// Both arrays stay referenced: a dropped one could be collected by the
	// ladder's garbage collection and change the figures.
	ax, err := a.DeviceArray([]int{2 * mib}, runtime.Float32) // 8 MiB
	if err != nil {
		t.Fatal(err)
	}
	bx, err := b.DeviceArray([]int{mib}, runtime.Float32) // 4 MiB
	if err != nil {
		t.Fatal(err)
	}
	sa, sb, root := a.Stats(), b.Stats(), s.Stats()
	if sa.Used != 8*mib || sa.LiveBlocks != 1 || sa.HardLimit != 64*mib {
		t.Errorf("a's stats: used %d in %d blocks, hard %d", sa.Used, sa.LiveBlocks, sa.HardLimit)
	}
	if sb.Used != 4*mib || sb.LiveBlocks != 1 || sb.HardLimit != 32*mib {
		t.Errorf("b's stats: used %d in %d blocks, hard %d", sb.Used, sb.LiveBlocks, sb.HardLimit)
	}
	if root.Used != 12*mib || root.LiveBlocks != 2 || root.HardLimit != 200*mib {
		t.Errorf("shared stats: used %d in %d blocks, hard %d", root.Used, root.LiveBlocks, root.HardLimit)
	}
	if sa.Reserved != root.Reserved || sb.Reserved != root.Reserved {
		t.Errorf("reserved: a %d, b %d, shared %d; it is the shared pool's", sa.Reserved, sb.Reserved, root.Reserved)
	}

	// pool.set_limit and pool.limits act on the runtime's own quota.
	err = a.DoString(`
		local pool = require("pool")
		pool.set_limit{hard = "16MiB"}
		assert(pool.limits().hard == 16 * 1024 * 1024)
		local st = pool.stats()
		assert(st.used == 8 * 1024 * 1024 and st.live_arrays == 1, "used " .. st.used)
		local ok, err = pcall(require("cuda").zeros, {3 * 1024 * 1024})
		assert(not ok and string.find(err, "hard limit 16.00 MiB", 1, true), err)`)
	if err != nil {
		t.Fatal(err)
	}
	goruntime.KeepAlive(ax)
	if _, hard := b.Limits(); hard != 32*mib {
		t.Errorf("a's set_limit changed b's quota to %d", hard)
	}
	if _, hard := s.Pool().Limits(); hard != 200*mib {
		t.Errorf("a's set_limit changed the shared limit to %d", hard)
	}

	status := a.Status()
	for _, want := range []string{
		"Memory pool usage: 8.0 MiB in 1 array (this runtime's, in a pool shared by 2 runtimes)",
		"Shared pool: 12 MiB in use, 12 MiB reserved, 0 B cached",
		"Limits: soft none, hard 16 MiB (this runtime's quota); shared pool soft none, hard 200 MiB; strategy caching",
	} {
		if !strings.Contains(status, want) {
			t.Errorf("status %q lacks %q", status, want)
		}
	}

	// Closing a frees its arrays into the shared pool; b's are untouched.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if root := s.Stats(); root.Used != 4*mib || root.LiveBlocks != 1 {
		t.Errorf("after a closed the shared pool holds %d bytes in %d blocks", root.Used, root.LiveBlocks)
	}
	if bx.IsFreed() {
		t.Fatal("closing a freed b's array")
	}
	if _, err := b.DeviceArray([]int{4 * mib}, runtime.Float32); err != nil { // 16 MiB, may reuse a's memory
		t.Fatal(err)
	}
}

func TestSharedRuntimesCannotUseEachOthersArrays(t *testing.T) {
	s := newShared(t, runtime.Options{})
	a := newTenant(t, s, runtime.Options{})
	b := newTenant(t, s, runtime.Options{})
	x, _ := a.Zeros([]int{4}, runtime.Float32)
	if _, err := b.Sum(x); err == nil || !strings.Contains(err.Error(), "another runtime") {
		t.Fatalf("b used a's array: %v", err)
	}
	y, _ := b.Zeros([]int{4}, runtime.Float32)
	if err := a.Axpy(x, 1, y); err == nil || !strings.Contains(err.Error(), "another runtime") {
		t.Fatalf("a used b's array: %v", err)
	}
}

// TestMemoryAClosedRuntimeFreedServesTheOthers checks that what a runtime
// frees at Close is reusable by another runtime's stream at once, from the
// cache: its stream's frees are fenced before the stream is destroyed, not
// left for a later call to fence on a stream that no longer exists.
func TestMemoryAClosedRuntimeFreedServesTheOthers(t *testing.T) {
	s := newShared(t, runtime.Options{})
	a := newTenant(t, s, runtime.Options{})
	b := newTenant(t, s, runtime.Options{})
	if _, err := b.Zeros([]int{2 * mib}, runtime.Float32); err != nil { // 8 MiB, freed by Close
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	free, _, _ := s.Backend().MemInfo()
	x, err := a.DeviceArray([]int{2 * mib}, runtime.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.CacheHits != 1 {
		t.Errorf("the closed runtime's memory did not serve the next allocation: %d cache hits, %d misses", st.CacheHits, st.CacheMisses)
	}
	if now, _, _ := s.Backend().MemInfo(); now != free {
		t.Errorf("the allocation drew %d new bytes from the backend instead of reusing the cache", free-now)
	}
	goruntime.KeepAlive(x)
}
