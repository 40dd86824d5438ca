package pool

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

const (
	kib = uint64(1) << 10
	mib = uint64(1) << 20
	gib = uint64(1) << 30
)

// strategiesOverFake are the strategies that run on a plain Source.
var strategiesOverFake = []string{StrategyCaching, StrategyNone}

func newTestPool(t testing.TB, src Source, cfg Config) *Pool {
	t.Helper()
	p, err := New(src, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// checkSourceClean fails the test when the fake saw a bad Free.
func checkSourceClean(t testing.TB, src *fakeSource) {
	t.Helper()
	for _, v := range src.problems() {
		t.Errorf("source: %s", v)
	}
}

func TestUnknownStrategyNamesValidOnes(t *testing.T) {
	_, err := New(newFakeSource(gib), Config{Strategy: "buddy"})
	if err == nil {
		t.Fatal("New accepted strategy \"buddy\"")
	}
	for _, want := range []string{`"buddy"`, `"caching"`, `"none"`, `"cuda"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestCUDAStrategyNeedsTheCUDABackend(t *testing.T) {
	_, err := New(newFakeSource(gib), Config{Strategy: StrategyCUDA})
	if err == nil || !strings.Contains(err.Error(), `pool strategy "cuda" needs the cuda backend`) {
		t.Fatalf("New(cuda) over a plain source: got %v", err)
	}
}

func TestDefaultStrategyIsCaching(t *testing.T) {
	p := newTestPool(t, newFakeSource(gib), Config{})
	if got := p.Strategy(); got != StrategyCaching {
		t.Fatalf("Strategy() = %q, want %q", got, StrategyCaching)
	}
}

func TestSoftLimitAboveHardLimitIsRejected(t *testing.T) {
	if _, err := New(newFakeSource(gib), Config{SoftLimit: 2 * mib, HardLimit: mib}); err == nil {
		t.Fatal("New accepted soft 2 MiB above hard 1 MiB")
	}
	p := newTestPool(t, newFakeSource(gib), Config{})
	if err := p.SetLimits(2*mib, mib); err == nil || !strings.Contains(err.Error(), "above hard limit") {
		t.Fatalf("SetLimits(2 MiB, 1 MiB) = %v", err)
	}
}

func TestFreeTwiceIsHarmless(t *testing.T) {
	for _, strategy := range strategiesOverFake {
		t.Run(strategy, func(t *testing.T) {
			src := newFakeSource(gib)
			p := newTestPool(t, src, Config{Strategy: strategy})
			a, err := p.Alloc(3*mib+7, 0)
			if err != nil {
				t.Fatal(err)
			}
			b, err := p.Alloc(5*kib, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				if err := p.Free(a); err != nil {
					t.Fatalf("Free #%d: %v", i+1, err)
				}
			}
			st := p.Stats()
			if st.LiveBlocks != 1 || st.Requested != 5*kib || st.Frees != 1 {
				t.Fatalf("after freeing a twice: %d live, %d requested, %d frees; want 1, %d, 1", st.LiveBlocks, st.Requested, st.Frees, 5*kib)
			}
			if err := p.Free(b); err != nil {
				t.Fatal(err)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if n, nbytes := src.outstanding(); n != 0 {
				t.Fatalf("after Close the source still lends %d allocations (%d bytes)", n, nbytes)
			}
			checkSourceClean(t, src)
		})
	}
}

func TestZeroByteBlockHoldsNoMemory(t *testing.T) {
	for _, strategy := range strategiesOverFake {
		t.Run(strategy, func(t *testing.T) {
			src := newFakeSource(gib)
			p := newTestPool(t, src, Config{Strategy: strategy})
			b, err := p.Alloc(0, 3)
			if err != nil {
				t.Fatal(err)
			}
			if b.Size != 0 || b.Stream != 3 {
				t.Fatalf("block = %+v", b)
			}
			st := p.Stats()
			if st.Used != 0 || st.Reserved != 0 || st.LiveBlocks != 1 || src.allocs != 0 {
				t.Fatalf("a 0-byte block: used %d, reserved %d, live %d, source allocs %d", st.Used, st.Reserved, st.LiveBlocks, src.allocs)
			}
			if err := p.Free(b); err != nil {
				t.Fatal(err)
			}
			if err := p.Free(b); err != nil {
				t.Fatal(err)
			}
			if st := p.Stats(); st.LiveBlocks != 0 || st.Frees != 1 {
				t.Fatalf("after free: %+v", st)
			}
		})
	}
}

func TestFreeRejectsForeignAndNilBlocks(t *testing.T) {
	p := newTestPool(t, newFakeSource(gib), Config{})
	q := newTestPool(t, newFakeSource(gib), Config{})
	b, err := q.Alloc(kib, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Free(b); err == nil || !strings.Contains(err.Error(), "pool.Free") {
		t.Fatalf("freeing another pool's block: %v", err)
	}
	if err := p.Free(nil); err == nil {
		t.Fatal("Free(nil) returned nil")
	}
	if err := p.Free(&Block{}); err == nil {
		t.Fatal("Free of a hand-made Block returned nil")
	}
}

func TestAccountingMatchesLiveBlocks(t *testing.T) {
	for _, strategy := range strategiesOverFake {
		t.Run(strategy, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
			src := newFakeSource(4 * gib)
			p := newTestPool(t, src, Config{Strategy: strategy})
			var live []*Block
			var asked uint64
			for i := 0; i < 400; i++ {
				if len(live) > 0 && rng.IntN(3) == 0 {
					j := rng.IntN(len(live))
					asked -= live[j].Size
					if err := p.Free(live[j]); err != nil {
						t.Fatal(err)
					}
					live = append(live[:j], live[j+1:]...)
					continue
				}
				n := rng.Uint64N(24*mib) + 1
				b, err := p.Alloc(n, device.Stream(rng.IntN(3)))
				if err != nil {
					t.Fatal(err)
				}
				if b.Size != n {
					t.Fatalf("Size = %d, want %d", b.Size, n)
				}
				live = append(live, b)
				asked += n
			}
			st := p.Stats()
			if st.Requested != asked || st.LiveBlocks != len(live) {
				t.Fatalf("Requested %d, LiveBlocks %d; want %d, %d", st.Requested, st.LiveBlocks, asked, len(live))
			}
			if st.Used < st.Requested || st.Reserved < st.Used || st.PeakUsed < st.Used || st.PeakReserved < st.Reserved {
				t.Fatalf("inconsistent stats %+v", st)
			}
			if _, srcBytes := src.outstanding(); srcBytes != st.Reserved {
				t.Fatalf("Reserved %d, but the source lends %d", st.Reserved, srcBytes)
			}
			if st.DeviceTotal != 4*gib || st.DeviceFree != 4*gib-roundedOutstanding(src) {
				t.Fatalf("device figures %d free of %d", st.DeviceFree, st.DeviceTotal)
			}
			for _, b := range live {
				if err := p.Free(b); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := p.Reclaim(0); err != nil {
				t.Fatal(err)
			}
			st = p.Stats()
			if st.Used != 0 || st.Requested != 0 || st.Reserved != 0 || st.LiveBlocks != 0 {
				t.Fatalf("after freeing and reclaiming everything: %+v", st)
			}
			if n, _ := src.outstanding(); n != 0 {
				t.Fatalf("source still lends %d allocations", n)
			}
			checkSourceClean(t, src)
		})
	}
}

func roundedOutstanding(src *fakeSource) uint64 {
	src.mu.Lock()
	defer src.mu.Unlock()
	var n uint64
	for _, s := range src.live {
		n += roundUp(s, sourceAlign)
	}
	return n
}

func TestResetPeakStartsFromCurrentUse(t *testing.T) {
	for _, strategy := range strategiesOverFake {
		t.Run(strategy, func(t *testing.T) {
			p := newTestPool(t, newFakeSource(gib), Config{Strategy: strategy})
			a, _ := p.Alloc(64*mib, 0)
			b, _ := p.Alloc(32*mib, 0)
			if err := p.Free(a); err != nil {
				t.Fatal(err)
			}
			before := p.Stats()
			p.ResetPeak()
			after := p.Stats()
			if before.PeakUsed < 96*mib || after.PeakUsed != after.Used || after.PeakReserved != after.Reserved {
				t.Fatalf("peaks before reset %d/%d, after %d/%d (used %d, reserved %d)",
					before.PeakUsed, before.PeakReserved, after.PeakUsed, after.PeakReserved, after.Used, after.Reserved)
			}
			_ = p.Free(b)
		})
	}
}

func TestClosedPoolRefusesAllocations(t *testing.T) {
	src := newFakeSource(gib)
	p := newTestPool(t, src, Config{})
	b, err := p.Alloc(mib, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Alloc(mib, 0); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Alloc after Close: %v", err)
	}
	if err := p.Free(b); err != nil {
		t.Fatalf("Free after Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if n, _ := src.outstanding(); n != 0 {
		t.Fatalf("source still lends %d allocations", n)
	}
	checkSourceClean(t, src)
}

func TestNonOOMSourceErrorIsReturnedWithoutRetry(t *testing.T) {
	for _, strategy := range strategiesOverFake {
		t.Run(strategy, func(t *testing.T) {
			src := newFakeSource(gib)
			pressured := 0
			p := newTestPool(t, src, Config{Strategy: strategy, Pressure: func() { pressured++ }})
			boom := errors.New("CUDA_ERROR_ILLEGAL_ADDRESS")
			src.failAlloc = boom
			_, err := p.Alloc(3*mib, 0)
			if !errors.Is(err, boom) || errors.Is(err, device.ErrOutOfMemory) {
				t.Fatalf("Alloc = %v; want the source's error", err)
			}
			if !strings.Contains(err.Error(), "allocating 3.00 MiB") {
				t.Errorf("error %q lacks context", err)
			}
			if src.allocs != 1 || pressured != 0 || p.Stats().OOMRetries != 0 {
				t.Fatalf("source called %d times, pressure %d, retries %d; want 1, 0, 0", src.allocs, pressured, p.Stats().OOMRetries)
			}
			// The pool is still usable.
			b, err := p.Alloc(3*mib, 0)
			if err != nil {
				t.Fatal(err)
			}
			_ = p.Free(b)
		})
	}
}

func TestAllocIntoFillsTheCallersBlock(t *testing.T) {
	src := newFakeSource(64 * mib)
	p := newTestPool(t, src, Config{HardLimit: 32 * mib})
	var holder struct {
		tag int
		blk Block
	}
	if err := p.AllocInto(&holder.blk, 3*mib, 1); err != nil {
		t.Fatal(err)
	}
	if holder.blk.Size != 3*mib || holder.blk.Stream != 1 || holder.blk.Ptr == 0 {
		t.Fatalf("block %+v", holder.blk)
	}
	if err := p.AllocInto(&holder.blk, mib, 1); err == nil {
		t.Fatal("AllocInto reused a live block")
	}
	mustFree(t, p, &holder.blk)
	// A failed AllocInto leaves the block usable for another try.
	var b Block
	if err := p.AllocInto(&b, 64*mib, 0); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("AllocInto over the hard limit = %v", err)
	}
	if err := p.AllocInto(&b, mib, 0); err != nil {
		t.Fatalf("second try with the same block: %v", err)
	}
	mustFree(t, p, &b)
	mustCheck(t, p)
}
