package pool

import (
	"errors"
	"strings"
	"testing"
)

func TestQuotaCapsEachViewOnItsOwn(t *testing.T) {
	src := newFakeSource(gib)
	p := newTestPool(t, src, Config{})
	v1, err := p.Quota(Config{HardLimit: 64 * mib})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := p.Quota(Config{HardLimit: 64 * mib})
	if err != nil {
		t.Fatal(err)
	}
	a := mustAlloc(t, v1, 40*mib, 0)
	_, err = v1.Alloc(30*mib, 0)
	var oom *OOMError
	if !errors.As(err, &oom) {
		t.Fatalf("v1 past its quota: %v", err)
	}
	if oom.HardLimit != 64*mib || oom.InUse != 40*mib || oom.LiveBlocks != 1 {
		t.Fatalf("OOMError %+v should describe v1", *oom)
	}
	b := mustAlloc(t, v2, 60*mib, 0) // v1's use does not count against v2
	if st := p.Stats(); st.Used != 100*mib || st.LiveBlocks != 2 {
		t.Fatalf("root sees %d bytes in %d blocks; want both views' 100 MiB in 2", st.Used, st.LiveBlocks)
	}
	if st := v1.Stats(); st.Used != 40*mib || st.LiveBlocks != 1 || st.HardLimit != 64*mib {
		t.Fatalf("v1 stats %+v", st)
	}
	mustFree(t, v1, a)
	mustFree(t, v2, b)
	mustCheck(t, p)
}

func TestQuotaViewsShareTheCache(t *testing.T) {
	src := newFakeSource(gib)
	p := newTestPool(t, src, Config{})
	v1, _ := p.Quota(Config{HardLimit: 64 * mib})
	v2, _ := p.Quota(Config{HardLimit: 64 * mib})
	a := mustAlloc(t, v1, 30*mib, 0)
	ptr := a.Ptr
	mustFree(t, v1, a)
	calls := src.allocs
	b := mustAlloc(t, v2, 30*mib, 0)
	if b.Ptr != ptr || src.allocs != calls {
		t.Fatal("v2 did not reuse the block v1 freed")
	}
	if st := v2.Stats(); st.CacheHits != 1 {
		t.Fatalf("v2 cache hits %d", st.CacheHits)
	}
	mustFree(t, v2, b)
}

func TestQuotaPressureIsTheViewsOwn(t *testing.T) {
	p := newTestPool(t, newFakeSource(gib), Config{})
	var v *Quota
	var queued []*Block
	calls := 0
	v, _ = p.Quota(Config{HardLimit: 32 * mib, Pressure: func() {
		calls++
		for _, b := range queued {
			_ = v.Free(b)
		}
		queued = nil
	}})
	queued = append(queued, mustAlloc(t, v, 30*mib, 0))
	b := mustAlloc(t, v, 30*mib, 0)
	if calls != 1 {
		t.Fatalf("view's Pressure called %d times", calls)
	}
	mustFree(t, v, b)
}

func TestClosingAQuotaFreesItsBlocks(t *testing.T) {
	src := newFakeSource(gib)
	p := newTestPool(t, src, Config{})
	v, _ := p.Quota(Config{HardLimit: gib})
	bs := []*Block{mustAlloc(t, v, 3*mib, 0), mustAlloc(t, v, 0, 0), mustAlloc(t, v, 50*mib, 1)}
	keep := mustAlloc(t, p, mib, 0)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.LiveBlocks != 1 || st.Used != keep.rounded {
		t.Fatalf("after closing the view the root holds %d blocks, %d bytes", st.LiveBlocks, st.Used)
	}
	if _, err := v.Alloc(mib, 0); err == nil {
		t.Fatal("closed view allocated")
	}
	for _, b := range bs {
		if err := v.Free(b); err != nil {
			t.Fatal(err)
		}
	}
	mustCheck(t, p)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n, _ := src.outstanding(); n != 0 {
		t.Fatalf("source lends %d after Close", n)
	}
}

func TestQuotaRejectsNestingAndOtherStrategies(t *testing.T) {
	p := newTestPool(t, newFakeSource(gib), Config{})
	v, err := p.Quota(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Quota(Config{}); err == nil || !strings.Contains(err.Error(), "pool.Quota") {
		t.Fatalf("nested Quota = %v", err)
	}
	if _, err := p.Quota(Config{Strategy: StrategyNone}); err == nil {
		t.Fatal("Quota with another strategy succeeded")
	}
	if _, err := p.Quota(Config{SoftLimit: 2 * mib, HardLimit: mib}); err == nil {
		t.Fatal("Quota with soft above hard succeeded")
	}
}

func TestLoweringAQuotaBelowItsUseSaysSo(t *testing.T) {
	p := newTestPool(t, newFakeSource(gib), Config{})
	v, _ := p.Quota(Config{HardLimit: 100 * mib})
	a := mustAlloc(t, v, 60*mib, 0)
	err := v.SetLimits(0, 50*mib)
	if err == nil || !strings.Contains(err.Error(), "60.00 MiB this quota's blocks hold") {
		t.Fatalf("SetLimits below the view's use = %v", err)
	}
	mustFree(t, v, a)
}

func TestOOMInAViewBlamesTheSharedPoolWhenItsLimitRefused(t *testing.T) {
	p := newTestPool(t, newFakeSource(gib), Config{HardLimit: 100 * mib})
	v, _ := p.Quota(Config{})
	a := mustAlloc(t, p, 60*mib, 0)
	b := mustAlloc(t, v, 30*mib, 0)
	_, err := v.Alloc(20*mib, 0)
	var oom *OOMError
	if !errors.As(err, &oom) {
		t.Fatalf("Alloc past the pool's hard limit = %v", err)
	}
	if oom.HardLimit != 100*mib || oom.InUse != 90*mib || oom.LiveBlocks != 2 {
		t.Fatalf("OOMError %+v should describe the whole pool", *oom)
	}
	mustFree(t, p, a)
	mustFree(t, v, b)
}
