package pool

import (
	"errors"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

func overlaps(a *Block, ptr device.Ptr, n uint64) bool {
	return a.Ptr < ptr+device.Ptr(n) && ptr < a.Ptr+device.Ptr(a.Size)
}

func TestSynchronousSourceReusesAcrossStreamsAtOnce(t *testing.T) {
	src := newFakeSource(gib)
	p := newTestPool(t, src, Config{})
	a := mustAlloc(t, p, 3*mib, 1)
	ptr := a.Ptr
	mustFree(t, p, a)
	b := mustAlloc(t, p, 3*mib, 2)
	if b.Ptr != ptr || b.Stream != 2 {
		t.Fatalf("on a synchronous source the block should be reused on stream 2 at once: %#x vs %#x", b.Ptr, ptr)
	}
}

func TestBlockIsNotReusedOnAnotherStreamUntilItsWorkIsDone(t *testing.T) {
	src := newEventSource(gib)
	p := newTestPool(t, src, Config{})
	const s1, s2 = device.Stream(1), device.Stream(2)
	a := mustAlloc(t, p, 19*mib, s1) // a 20 MiB segment of its own
	src.work(s1)
	seg, segSize := a.Ptr, uint64(20*mib)
	mustFree(t, p, a)

	// The same stream may reuse it at once: its work is ordered.
	b := mustAlloc(t, p, 19*mib, s1)
	if b.Ptr != seg {
		t.Fatalf("stream 1 did not reuse its own freed block")
	}
	mustFree(t, p, b)

	// Another stream may not while stream 1 has not finished.
	c := mustAlloc(t, p, 19*mib, s2)
	src.work(s2)
	if overlaps(c, seg, segSize) {
		t.Fatal("stream 2 got memory stream 1 may still be using")
	}
	mustFree(t, p, c)
	mustCheck(t, p)

	// Once stream 1 is done, stream 2 may have it.
	src.finish(s1)
	calls := src.allocs
	d := mustAlloc(t, p, 19*mib, device.Stream(3))
	if src.allocs != calls || d.Ptr != seg {
		t.Fatalf("stream 1's block was not reused once its event was done")
	}
	// Stream 2's block is still busy: a second one comes from the source.
	e := mustAlloc(t, p, 19*mib, device.Stream(3))
	if src.allocs != calls+1 || overlaps(e, c.Ptr, 19*mib) {
		t.Fatalf("stream 3 got stream 2's block before stream 2 finished")
	}
	mustCheck(t, p)
}

func TestRecordStreamDelaysReuseEvenOnTheOwnStream(t *testing.T) {
	src := newEventSource(gib)
	p := newTestPool(t, src, Config{})
	const s1, s2 = device.Stream(1), device.Stream(2)
	a := mustAlloc(t, p, 12*mib, s1) // a segment of its own
	ptr := a.Ptr
	p.RecordStream(a, s2)
	p.RecordStream(a, s2) // twice is once
	p.RecordStream(a, s1) // its own stream adds nothing
	src.work(s1)
	src.work(s2)
	if len(a.uses) != 1 {
		t.Fatalf("uses = %v", a.uses)
	}
	mustFree(t, p, a)
	src.finish(s1)
	b := mustAlloc(t, p, 12*mib, s1)
	if b.Ptr == ptr {
		t.Fatal("reused while stream 2 may still be using it")
	}
	src.finish(s2)
	c := mustAlloc(t, p, 12*mib, s1)
	if c.Ptr != ptr {
		t.Fatalf("not reused once stream 2 was done: %#x vs %#x", c.Ptr, ptr)
	}
	mustCheck(t, p)
}

func TestBoundMemoryIsReleasedBySynchronisingUnderPressure(t *testing.T) {
	src := &syncSource{eventSource: newEventSource(40 * mib)}
	p := newTestPool(t, src, Config{})
	a := mustAlloc(t, p, 30*mib, 1)
	src.work(1)
	mustFree(t, p, a)
	b, err := p.Alloc(30*mib, 2)
	if err != nil {
		t.Fatalf("with a synchronisable device the ladder should make room: %v", err)
	}
	if src.syncs == 0 {
		t.Fatal("the device was never synchronised")
	}
	mustFree(t, p, b)
	mustCheck(t, p)
}

func TestBoundMemoryWithoutSynchronisingWaitsForItsEvent(t *testing.T) {
	src := newEventSource(40 * mib)
	p := newTestPool(t, src, Config{})
	a := mustAlloc(t, p, 30*mib, 1)
	src.work(1)
	mustFree(t, p, a)
	if _, err := p.Alloc(30*mib, 2); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("Alloc while stream 1 still runs = %v; want out of memory", err)
	}
	src.finish(1)
	b, err := p.Alloc(30*mib, 2)
	if err != nil {
		t.Fatalf("after stream 1 finished: %v", err)
	}
	mustFree(t, p, b)
	mustCheck(t, p)
}

func TestFailedStreamRecordHoldsMemoryUntilClose(t *testing.T) {
	src := newEventSource(gib)
	p := newTestPool(t, src, Config{})
	a := mustAlloc(t, p, 12*mib, 1)
	p.RecordStream(a, 2)
	src.failRecord, src.failRecordOn = errors.New("CUDA_ERROR_INVALID_HANDLE"), 2
	err := p.Free(a)
	if err == nil || !strings.Contains(err.Error(), "kept until the pool closes") {
		t.Fatalf("Free with a failing Record = %v", err)
	}
	if err := p.Free(a); err != nil {
		t.Fatalf("second Free: %v", err)
	}
	src.finish(1)
	src.finish(2)
	if released, _ := p.Reclaim(0); released != 0 {
		t.Fatalf("released %d bytes of memory stream 2 may still use", released)
	}
	if st := p.Stats(); st.LiveBlocks != 0 || st.Reserved != 12*mib {
		t.Fatalf("after the failed free: %+v", st)
	}
	mustCheck(t, p)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n, _ := src.outstanding(); n != 0 {
		t.Fatalf("source lends %d after Close", n)
	}
}

func TestCloseDestroysEveryEvent(t *testing.T) {
	src := newEventSource(gib)
	p := newTestPool(t, src, Config{})
	for i := 0; i < 20; i++ {
		b := mustAlloc(t, p, uint64(i+1)*mib, device.Stream(i%4))
		p.RecordStream(b, device.Stream(5+i%2))
		mustFree(t, p, b)
		if i%3 == 0 {
			src.finish(device.Stream(5))
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n := src.liveEvents(); n != 0 {
		t.Fatalf("%d events left after Close", n)
	}
	checkSourceClean(t, src.fakeSource)
}

func TestEventsAreReusedAcrossManyStreams(t *testing.T) {
	src := newEventSource(gib)
	p := newTestPool(t, src, Config{})
	for i := 0; i < 200; i++ {
		s := device.Stream(10 + i)
		mustFree(t, p, mustAlloc(t, p, 300*kib, s))
		src.finish(s)
		p.Synchronized()
	}
	if n := src.liveEvents(); n > 2 {
		t.Fatalf("%d events alive after 200 streams came and went; want them reused", n)
	}
	if n := len(p.a.(*caching).order.fences); n > 2 {
		t.Fatalf("%d stream fences kept after 200 streams came and went and were synchronised", n)
	}
	mustCheck(t, p)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n := src.liveEvents(); n != 0 {
		t.Fatalf("%d events left after Close", n)
	}
}

func TestOneStreamRecordsNoEvents(t *testing.T) {
	src := newEventSource(gib)
	p := newTestPool(t, src, Config{})
	for i := 0; i < 100; i++ {
		b := mustAlloc(t, p, uint64(i%7+1)*mib, 1)
		src.work(1)
		mustFree(t, p, b)
	}
	if src.records != 0 || src.liveEvents() != 0 {
		t.Fatalf("one stream's frees recorded %d events (%d alive); want none", src.records, src.liveEvents())
	}
	// Another stream that finds nothing free records stream 1's fence
	// once, and gets the memory when stream 1 is done.
	src.finish(1)
	b := mustAlloc(t, p, 7*mib, 2)
	if src.records != 1 || src.allocs != 7 {
		t.Fatalf("stream 2: %d records, %d source allocations; want 1 and the 7 segments stream 1 left", src.records, src.allocs)
	}
	mustFree(t, p, b)
	mustCheck(t, p)
}
