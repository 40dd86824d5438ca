package pool

import (
	"errors"
	"testing"

	"github.com/gluaproject/glua/device"
)

func mustAlloc(t testing.TB, p Allocator, n uint64, s device.Stream) *Block {
	t.Helper()
	b, err := p.Alloc(n, s)
	if err != nil {
		t.Fatalf("Alloc(%d, %d): %v", n, s, err)
	}
	return b
}

func mustFree(t testing.TB, p Allocator, b *Block) {
	t.Helper()
	if err := p.Free(b); err != nil {
		t.Fatalf("Free: %v", err)
	}
}

func mustCheck(t testing.TB, p *Pool) {
	t.Helper()
	if err := checkInvariants(p); err != nil {
		t.Fatal(err)
	}
}

// shareMidSegments makes p draw mid-size blocks from shared 20 MiB
// segments, PyTorch's choice, for tests of splitting inside one segment.
func shareMidSegments(p *Pool) *Pool {
	p.a.(*caching).shareMid = true
	return p
}

func TestFreedBlockIsReusedWithoutTheSource(t *testing.T) {
	src := newFakeSource(gib)
	p := newTestPool(t, src, Config{})
	a := mustAlloc(t, p, 3*mib, 0)
	ptr := a.Ptr
	mustFree(t, p, a)
	calls := src.allocs
	b := mustAlloc(t, p, 3*mib-100, 0)
	if src.allocs != calls || b.Ptr != ptr {
		t.Fatalf("second alloc: source called %d more times, ptr %#x (first %#x)", src.allocs-calls, b.Ptr, ptr)
	}
	st := p.Stats()
	if st.CacheHits != 1 || st.CacheMisses != 1 {
		t.Fatalf("hits %d misses %d; want 1 1", st.CacheHits, st.CacheMisses)
	}
	mustFree(t, p, b)
	mustCheck(t, p)
}

func TestSegmentsAmortiseTheSource(t *testing.T) {
	cases := []struct {
		size     uint64
		count    int
		shareMid bool
		segments int // segments the source is asked for
	}{
		{4 * kib, 512, false, 1},    // small blocks share 2 MiB segments
		{256 * kib, 16, false, 2},   // 8 a segment
		{1, 1, false, 1},            // a byte is a 512-byte block
		{3 * mib, 12, false, 12},    // mid-size blocks get their own
		{3 * mib, 12, true, 2},      // or share 20 MiB segments: 6 a segment
		{24 * mib, 3, true, 3},      // large blocks always get their own
		{smallMax + 1, 1, false, 1}, // just above small goes to the large pool
		{smallMax + 1, 80, true, 2}, // 79 a shared segment
	}
	for _, c := range cases {
		src := newFakeSource(gib)
		p := newTestPool(t, src, Config{})
		p.a.(*caching).shareMid = c.shareMid
		for i := 0; i < c.count; i++ {
			mustAlloc(t, p, c.size, 0)
		}
		if src.allocs != c.segments {
			t.Errorf("%d blocks of %d bytes (shared mid segments %v) took %d source allocations, want %d", c.count, c.size, c.shareMid, src.allocs, c.segments)
		}
		mustCheck(t, p)
	}
}

func TestSmallBlocksDoNotSplitCachedLargeSegments(t *testing.T) {
	src := newFakeSource(gib)
	p := newTestPool(t, src, Config{})
	big := mustAlloc(t, p, 40*mib, 0)
	mustFree(t, p, big) // 40 MiB cached in the large pool
	small := mustAlloc(t, p, 64*kib, 0)
	if src.allocs != 2 {
		t.Fatalf("source allocations %d, want 2 (a small segment despite the cached large one)", src.allocs)
	}
	if small.Ptr >= big.Ptr && small.Ptr < big.Ptr+device.Ptr(40*mib) {
		t.Fatal("small block placed inside the large segment")
	}
	if st := p.Stats(); st.LargestFreeBlock != 40*mib {
		t.Fatalf("largest free block %d; the 40 MiB segment should be whole", st.LargestFreeBlock)
	}
	mustCheck(t, p)
}

func TestBestFitPicksSmallestSufficientFreeBlock(t *testing.T) {
	src := newFakeSource(gib)
	p := newTestPool(t, src, Config{})
	// Three free holes of 5, 2 and 3 MiB, each before a live block, and
	// 7 MiB free at the end of the segment.
	var holes []*Block
	var keep []*Block
	for _, n := range []uint64{5 * mib, 2 * mib, 3 * mib} {
		holes = append(holes, mustAlloc(t, p, n, 0))
		keep = append(keep, mustAlloc(t, p, mib+512, 0))
	}
	want := holes[2].Ptr
	for _, h := range holes {
		mustFree(t, p, h)
	}
	b := mustAlloc(t, p, 2*mib+1, 0)
	if b.Ptr != want {
		t.Fatalf("2 MiB+1 placed at %#x, want the 3 MiB hole at %#x", b.Ptr, want)
	}
	mustCheck(t, p)
	_ = keep
}

func TestFreeNeighboursMergeBackIntoWholeSegment(t *testing.T) {
	src := newFakeSource(gib)
	p := newTestPool(t, src, Config{})
	// A cached 20 MiB segment is split to serve six 3 MiB blocks.
	mustFree(t, p, mustAlloc(t, p, 20*mib, 0))
	var bs []*Block
	for i := 0; i < 6; i++ {
		bs = append(bs, mustAlloc(t, p, 3*mib, 0))
	}
	if src.allocs != 1 {
		t.Fatalf("source allocations %d; the cached segment should have served all six", src.allocs)
	}
	// Free in an order that needs merging on both sides.
	for _, i := range []int{1, 3, 0, 5, 2, 4} {
		mustFree(t, p, bs[i])
		mustCheck(t, p)
	}
	st := p.Stats()
	if st.Segments != 1 || st.LargestFreeBlock != largeSegment {
		t.Fatalf("segments %d, largest free %d; want 1 whole 20 MiB segment", st.Segments, st.LargestFreeBlock)
	}
	released, err := p.Reclaim(0)
	if err != nil || released != largeSegment {
		t.Fatalf("Reclaim = %d, %v", released, err)
	}
	if n, _ := src.outstanding(); n != 0 {
		t.Fatalf("source still lends %d", n)
	}
}

func TestReclaimReleasesOnlyWholeFreeSegments(t *testing.T) {
	src := newFakeSource(gib)
	p := shareMidSegments(newTestPool(t, src, Config{}))
	a := mustAlloc(t, p, 30*mib, 0) // own segment: 30 MiB
	b := mustAlloc(t, p, 40*mib, 0) // own segment: 40 MiB
	c := mustAlloc(t, p, 3*mib, 0)  // 20 MiB segment shared with d
	d := mustAlloc(t, p, 3*mib, 0)
	mustFree(t, p, a)
	mustFree(t, p, b)
	mustFree(t, p, c)
	// Asking for 10 MiB releases one segment, the largest.
	released, err := p.Reclaim(10 * mib)
	if err != nil || released != 40*mib {
		t.Fatalf("Reclaim(10 MiB) = %d, %v; want the 40 MiB segment", released, err)
	}
	released, err = p.Reclaim(0)
	if err != nil || released != 30*mib {
		t.Fatalf("Reclaim(0) = %d, %v; want the 30 MiB segment (the 20 MiB one holds d)", released, err)
	}
	st := p.Stats()
	if st.Reserved != largeSegment || st.Reclaims != 2 {
		t.Fatalf("reserved %d, reclaims %d", st.Reserved, st.Reclaims)
	}
	mustFree(t, p, d)
	mustCheck(t, p)
}

func TestLadderReleasesCacheBeforeFailing(t *testing.T) {
	src := newFakeSource(100 * mib)
	p := newTestPool(t, src, Config{})
	// Fill the device with cached 20 MiB segments, then free everything:
	// the cache holds 100 MiB in five segments.
	var bs []*Block
	for i := 0; i < 5; i++ {
		bs = append(bs, mustAlloc(t, p, 20*mib, 0))
	}
	for _, b := range bs {
		mustFree(t, p, b)
	}
	// 50 MiB fits in no cached block nor on the device until the cache goes.
	b, err := p.Alloc(50*mib, 0)
	if err != nil {
		t.Fatalf("Alloc(50 MiB) with 100 MiB cached: %v", err)
	}
	if st := p.Stats(); st.OOMRetries != 1 || st.Reclaims != 5 {
		t.Fatalf("retries %d reclaims %d; want 1 and 5", st.OOMRetries, st.Reclaims)
	}
	mustFree(t, p, b)
	mustCheck(t, p)
	checkSourceClean(t, src)
}

func TestSegmentShrinksToRequestNearTheHardLimit(t *testing.T) {
	src := newFakeSource(gib)
	p := shareMidSegments(newTestPool(t, src, Config{HardLimit: 30 * mib}))
	a := mustAlloc(t, p, 3*mib, 0) // a 20 MiB segment
	b := mustAlloc(t, p, 9*mib, 0) // from its cache
	c := mustAlloc(t, p, 8*mib, 0) // fills it
	// A fourth block needs a new segment: 20 MiB more would pass the hard
	// limit, so the segment is just the 5 MiB asked for.
	d := mustAlloc(t, p, 5*mib, 0)
	st := p.Stats()
	if st.Reserved != 25*mib || src.allocs != 2 {
		t.Fatalf("reserved %d in %d source allocations; want 25 MiB in 2", st.Reserved, src.allocs)
	}
	for _, x := range []*Block{a, b, c, d} {
		mustFree(t, p, x)
	}
	mustCheck(t, p)
}

func TestCachingReturnsEveryByteOnClose(t *testing.T) {
	src := newFakeSource(gib)
	p := newTestPool(t, src, Config{})
	var live []*Block
	for i := 0; i < 50; i++ {
		live = append(live, mustAlloc(t, p, uint64(i+1)*300*kib, device.Stream(i%3)))
	}
	for i := 0; i < 50; i += 2 {
		mustFree(t, p, live[i])
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n, _ := src.outstanding(); n != 0 {
		t.Fatalf("source lends %d after Close", n)
	}
	for _, b := range live {
		if err := p.Free(b); err != nil {
			t.Fatal(err)
		}
	}
	checkSourceClean(t, src)
}

func TestSourceFreeErrorIsReported(t *testing.T) {
	src := newFakeSource(gib)
	p := newTestPool(t, src, Config{})
	mustFree(t, p, mustAlloc(t, p, 3*mib, 0))
	boom := errors.New("CUDA_ERROR_LAUNCH_FAILED")
	src.failFree = boom
	if _, err := p.Reclaim(0); !errors.Is(err, boom) {
		t.Fatalf("Reclaim with a failing source Free = %v", err)
	}
}

func TestRecentlyFreedChunksServeTheirSizeAndMergeWhenNeeded(t *testing.T) {
	src := newFakeSource(gib)
	p := newTestPool(t, src, Config{})
	var blocks []*Block
	for i := 0; i < recentMax; i++ {
		blocks = append(blocks, mustAlloc(t, p, 128*kib, 0)) // one 2 MiB small segment
	}
	ptr := blocks[3].Ptr
	for _, b := range blocks {
		mustFree(t, p, b)
	}
	// The same size comes back without a tree search: the newest first.
	b := mustAlloc(t, p, 128*kib, 0)
	if b.Ptr != blocks[len(blocks)-1].Ptr {
		t.Fatalf("128 KiB came from %#x, not the chunk freed last", b.Ptr)
	}
	mustFree(t, p, b)
	// A size nothing recent matches merges them first: the 1 MiB they
	// make up serves it without the source.
	calls := src.allocs
	c := mustAlloc(t, p, 256*kib, 0)
	if src.allocs != calls || c.Ptr > ptr {
		t.Fatalf("256 KiB: %d source calls (want none), at %#x", src.allocs-calls, c.Ptr)
	}
	mustFree(t, p, c)
	mustCheck(t, p)
	if released, err := p.Reclaim(0); err != nil || released != smallSegment {
		t.Fatalf("Reclaim = %d, %v; want the whole segment back", released, err)
	}
}
