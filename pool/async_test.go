package pool

import (
	"errors"
	"math"
	"testing"

	"github.com/gluaproject/glua/device"
)

// asyncSource imitates the driver's stream-ordered pool over a fakeSource:
// freed memory stays in the driver's cache until TrimTo, and a request the
// device cannot place fails even while the cache holds memory.
type asyncSource struct {
	*eventSource
	cache      map[device.Ptr]uint64 // freed, kept by the "driver"
	sizes      map[device.Ptr]uint64
	threshold  uint64
	asyncAlloc int
	asyncFree  []device.Stream // the stream of each FreeAsync
	trims      int
}

func newAsyncSource(capacity uint64) *asyncSource {
	return newAsyncSourceOver(newEventSource(capacity))
}

func newAsyncSourceOver(e *eventSource) *asyncSource {
	return &asyncSource{eventSource: e, cache: map[device.Ptr]uint64{}, sizes: map[device.Ptr]uint64{}}
}

// syncAsyncSource can also wait for the whole device.
type syncAsyncSource struct{ *asyncSource }

func (s syncAsyncSource) Synchronize() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for st, n := range s.queued {
		s.finished[st] = n
	}
	return nil
}

func (a *asyncSource) AllocAsync(nbytes uint64, s device.Stream) (device.Ptr, error) {
	a.asyncAlloc++
	for p, n := range a.cache {
		if n == nbytes {
			delete(a.cache, p)
			return p, nil
		}
	}
	p, err := a.Alloc(nbytes)
	if err == nil {
		a.sizes[p] = nbytes
	}
	return p, err
}

func (a *asyncSource) FreeAsync(p device.Ptr, s device.Stream) error {
	n, ok := a.sizes[p]
	if !ok {
		return errors.New("fake: FreeAsync of unknown memory")
	}
	if _, cached := a.cache[p]; cached {
		return errors.New("fake: FreeAsync twice")
	}
	a.asyncFree = append(a.asyncFree, s)
	a.cache[p] = n
	return nil
}

func (a *asyncSource) SetReleaseThreshold(n uint64) error { a.threshold = n; return nil }

func (a *asyncSource) TrimTo(keep uint64) error {
	a.trims++
	held, _ := a.PoolReserved()
	for p, n := range a.cache {
		if held <= keep {
			break
		}
		if err := a.Free(p, n); err != nil {
			return err
		}
		delete(a.cache, p)
		delete(a.sizes, p)
		held -= n
	}
	return nil
}

func (a *asyncSource) PoolReserved() (uint64, error) {
	var n uint64
	for _, s := range a.sizes {
		n += s
	}
	return n, nil
}

func TestCUDAStrategyGoesThroughTheDriverPool(t *testing.T) {
	src := newAsyncSource(gib)
	p := newTestPool(t, src, Config{Strategy: StrategyCUDA, HardLimit: 100 * mib})
	if src.threshold != 100*mib {
		t.Fatalf("release threshold %d, want the hard limit", src.threshold)
	}
	a := mustAlloc(t, p, 30*mib+1, 3)
	if src.asyncAlloc != 1 || a.Stream != 3 {
		t.Fatalf("AllocAsync calls %d", src.asyncAlloc)
	}
	b := mustAlloc(t, p, 60*mib, 4)
	// The hard limit is enforced in Go: the driver is not even asked.
	if _, err := p.Alloc(20*mib, 4); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("past the hard limit: %v", err)
	}
	if src.asyncAlloc != 2 {
		t.Fatalf("the driver was asked for memory past the hard limit")
	}
	st := p.Stats()
	if st.Used != 90*mib+granularity || st.Requested != 90*mib+1 || st.LiveBlocks != 2 {
		t.Fatalf("stats %+v", st)
	}
	mustFree(t, p, a)
	mustFree(t, p, a)
	if len(src.asyncFree) != 1 || src.asyncFree[0] != 3 {
		t.Fatalf("FreeAsync streams %v; want one free on stream 3", src.asyncFree)
	}
	if err := p.SetLimits(10*mib, 0); err != nil {
		t.Fatal(err)
	}
	if src.threshold != 10*mib {
		t.Fatalf("release threshold %d, want the soft limit", src.threshold)
	}
	if err := p.SetLimits(0, 0); err != nil {
		t.Fatal(err)
	}
	if src.threshold != math.MaxUint64 {
		t.Fatalf("release threshold %d with no limits; want everything kept", src.threshold)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n, _ := src.outstanding(); n != 0 || b.freed != true {
		t.Fatalf("after Close the device lends %d allocations", n)
	}
	checkSourceClean(t, src.fakeSource)
}

func TestCUDAStrategyTrimsTheDriverCacheBeforeFailing(t *testing.T) {
	src := newAsyncSource(64 * mib)
	p := newTestPool(t, src, Config{Strategy: StrategyCUDA})
	a := mustAlloc(t, p, 40*mib, 0)
	mustFree(t, p, a) // the driver caches 40 MiB
	b, err := p.Alloc(50*mib, 0)
	if err != nil {
		t.Fatalf("Alloc(50 MiB) with 40 MiB in the driver's cache: %v", err)
	}
	if src.trims == 0 || p.Stats().OOMRetries != 1 {
		t.Fatalf("trims %d, retries %d", src.trims, p.Stats().OOMRetries)
	}
	mustFree(t, p, b)
	if released, err := p.Reclaim(0); err != nil || released != 50*mib {
		t.Fatalf("Reclaim = %d, %v", released, err)
	}
}

func TestCUDAStrategyDefersFreeUntilRecordedStreamsFinish(t *testing.T) {
	src := newAsyncSource(gib)
	p := newTestPool(t, src, Config{Strategy: StrategyCUDA})
	a := mustAlloc(t, p, mib, 1)
	p.RecordStream(a, 2)
	src.work(2)
	mustFree(t, p, a)
	if len(src.asyncFree) != 0 {
		t.Fatal("freed to the driver while stream 2 may use the block")
	}
	p.Synchronized()
	if len(src.asyncFree) != 0 {
		t.Fatal("freed to the driver before stream 2 finished")
	}
	src.finish(2)
	p.Synchronized()
	if len(src.asyncFree) != 1 || src.asyncFree[0] != 1 {
		t.Fatalf("FreeAsync calls %v after stream 2 finished", src.asyncFree)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n := src.liveEvents(); n != 0 {
		t.Fatalf("%d events left", n)
	}
}

func TestCUDAStrategyCountsTheDriverCacheAgainstTheHardLimit(t *testing.T) {
	src := newAsyncSource(gib)
	p := newTestPool(t, src, Config{Strategy: StrategyCUDA, HardLimit: 64 * mib})
	mustFree(t, p, mustAlloc(t, p, 40*mib, 0))
	if st := p.Stats(); st.Reserved != 40*mib || st.Used != 0 {
		t.Fatalf("with 40 MiB in the driver's cache: reserved %d, used %d; want the cache counted", st.Reserved, st.Used)
	}
	// 40 MiB cached + 30 MiB new would pass 64 MiB: the cache is trimmed.
	b := mustAlloc(t, p, 30*mib, 0)
	if st := p.Stats(); st.Reserved != 30*mib {
		t.Fatalf("reserved %d after the trim; want 30 MiB", st.Reserved)
	}
	if _, nbytes := src.outstanding(); nbytes > 64*mib {
		t.Fatalf("the device lends %d bytes under a 64 MiB hard limit", nbytes)
	}
	mustFree(t, p, b)
	if released, err := p.Reclaim(0); err != nil || released != 30*mib {
		t.Fatalf("Reclaim = %d, %v", released, err)
	}
}
