package pool

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
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

// FuzzQuota drives quotas over one pool through allocations from each and
// from the pool itself, frees through any of them, Pressure, limit changes
// and closing a quota. After every step each quota's figures must be those
// of its own blocks and within its hard limit, the pool's those of every
// block, and an *OOMError must give the figures of the quota or of the
// pool.
func FuzzQuota(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 3, 0, 1, 0, 3, 0, 9, 2, 2, 1, 4, 0, 3, 1, 1, 7, 1})
	f.Add([]byte{1, 2, 0, 4, 20, 1, 0, 0, 4, 30, 0, 3, 1, 1, 5, 1, 3, 9, 7, 0, 5, 2, 1, 2, 6, 4, 6})
	f.Add([]byte{0, 1, 1, 3, 200, 0, 0, 2, 1, 3, 100, 9, 0, 4, 2, 8, 1, 5, 0, 0, 7, 2, 0, 2, 3, 3, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{data: data}
		const quotas = 3 // allocator quotas is the pool itself
		var p *Pool
		var q [quotas]*Quota
		var live, garbage [quotas + 1][]*Block
		owner := map[*Block]int{}
		drop := func(b *Block) {
			i := owner[b]
			live[i] = slices.DeleteFunc(live[i], func(x *Block) bool { return x == b })
			garbage[i] = slices.DeleteFunc(garbage[i], func(x *Block) bool { return x == b })
			delete(owner, b)
		}
		allocator := func(i int) Allocator {
			if i == quotas {
				return p
			}
			return q[i]
		}
		open := func(i int) {
			var err error
			q[i], err = p.Quota(Config{HardLimit: uint64(r.byte()%8) * 16 * mib, Pressure: func() {
				// What the quota's runtime's cleanups queued, freed through
				// the pool: the quota is credited all the same.
				for _, b := range slices.Clone(garbage[i]) {
					if err := p.Free(b); err != nil {
						t.Errorf("Free from Pressure: %v", err)
					}
					drop(b)
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
		}
		p = newTestPool(t, newFakeSource(256*mib), Config{Strategy: strategiesOverFake[r.byte()%2]})
		for i := range q {
			open(i)
		}
		for step := 0; r.more() && step < 300; step++ {
			i := int(r.byte()) % (quotas + 1)
			switch op := r.byte() % 10; op {
			case 0, 1, 2:
				n := r.size()
				b, err := allocator(i).Alloc(n, device.Stream(r.byte()%fuzzStreams))
				if err != nil {
					checkQuotaOOM(t, step, err, allocator(i), p)
					break
				}
				if b.Size != n {
					t.Fatalf("step %d: Alloc(%d) gave %d bytes", step, n, b.Size)
				}
				live[i] = append(live[i], b)
				owner[b] = i
				if i < quotas && r.byte()%3 == 0 {
					garbage[i] = append(garbage[i], b)
				}
			case 3, 4:
				if len(live[i]) == 0 {
					break
				}
				b := live[i][int(r.byte())%len(live[i])]
				if err := allocator(int(r.byte()) % (quotas + 1)).Free(b); err != nil {
					t.Fatalf("step %d: Free: %v", step, err)
				}
				drop(b)
			case 5:
				soft, hard := uint64(r.byte()%8)*8*mib, uint64(r.byte()%8)*16*mib
				before := allocator(i).Stats()
				err := allocator(i).SetLimits(soft, hard)
				refused := hard > 0 && soft > hard || hard > 0 && i < quotas && before.Used > hard
				if i < quotas && (err != nil) != refused {
					t.Fatalf("step %d: quota SetLimits(%d, %d) with %d in use = %v", step, soft, hard, before.Used, err)
				}
				if s, h := allocator(i).Limits(); err != nil && (s != before.SoftLimit || h != before.HardLimit) {
					t.Fatalf("step %d: a refused SetLimits left limits %d, %d", step, s, h)
				}
			case 6:
				if i == quotas {
					break
				}
				if err := q[i].Close(); err != nil {
					t.Fatalf("step %d: closing a quota: %v", step, err)
				}
				for _, b := range slices.Clone(live[i]) {
					drop(b)
					if err := allocator(int(r.byte()) % (quotas + 1)).Free(b); err != nil {
						t.Fatalf("step %d: Free after its quota closed: %v", step, err)
					}
				}
				open(i)
			case 7:
				allocator(i).Synchronized()
			case 8:
				if _, err := allocator(i).Reclaim(uint64(r.byte()%4) * 16 * mib); err != nil {
					t.Fatalf("step %d: Reclaim: %v", step, err)
				}
			case 9:
				allocator(i).ResetPeak()
			}
			checkQuotaStep(t, step, p, q[:], live[:])
		}
	})
}

// checkQuotaOOM checks that a failed allocation from a (a Quota or p) is an
// *OOMError with the figures of a or of p.
func checkQuotaOOM(t *testing.T, step int, err error, a Allocator, p *Pool) {
	t.Helper()
	var oom *OOMError
	if !errors.As(err, &oom) {
		t.Fatalf("step %d: Alloc: %v", step, err)
	}
	for _, who := range []Allocator{a, p} {
		if st := who.Stats(); oom.HardLimit == st.HardLimit && oom.InUse == st.Used && oom.LiveBlocks == st.LiveBlocks {
			return
		}
	}
	t.Fatalf("step %d: %+v gives the figures of neither the quota nor the pool", step, *oom)
}

func checkQuotaStep(t *testing.T, step int, p *Pool, q []*Quota, live [][]*Block) {
	t.Helper()
	if err := checkInvariants(p); err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
	var all []*Block
	var used, asked uint64
	for i, blocks := range live {
		all = append(all, blocks...)
		var u, a uint64
		for _, b := range blocks {
			u += b.rounded
			a += b.Size
		}
		used, asked = used+u, asked+a
		if i == len(q) {
			break
		}
		st := q[i].Stats()
		if st.Used != u || st.Requested != a || st.LiveBlocks != len(blocks) || st.HardLimit > 0 && st.Used > st.HardLimit || st.PeakUsed < st.Used {
			t.Fatalf("step %d: quota %d: %+v; its blocks hold %d (%d asked) in %d", step, i, st, u, a, len(blocks))
		}
	}
	if st := p.Stats(); st.Used != used || st.Requested != asked || st.LiveBlocks != len(all) {
		t.Fatalf("step %d: pool: %+v; all blocks hold %d (%d asked) in %d", step, st, used, asked, len(all))
	}
	if err := liveOverlap(all); err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
}
