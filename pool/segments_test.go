package pool

import "testing"

// holesInOneSegment makes p hold one 64 MiB segment cut into eight 8 MiB
// blocks, and frees every other one: 32 MiB cached in 8 MiB holes, none
// of which the pool can release (each shares the segment with live
// blocks). It returns the eight blocks, the freed ones included.
func holesInOneSegment(t *testing.T, p *Pool) []*Block {
	t.Helper()
	whole, err := p.Alloc(64*mib, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Free(whole); err != nil {
		t.Fatal(err)
	}
	var blocks []*Block
	for i := 0; i < 8; i++ {
		b, err := p.Alloc(8*mib, 0)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, b)
	}
	for i := 1; i < len(blocks); i += 2 {
		if err := p.Free(blocks[i]); err != nil {
			t.Fatal(err)
		}
	}
	return blocks
}

// Segments shows the pieces a segment is cut into, live and cached, tiling
// it in address order: what a picture of fragmentation needs.
func TestSegmentsShowLiveAndCachedPieces(t *testing.T) {
	p := newTestPool(t, newFakeSource(gib), Config{})
	blocks := holesInOneSegment(t, p)
	segs := p.Segments()
	if len(segs) != 1 || segs[0].Size != 64*mib || len(segs[0].Pieces) != 8 {
		t.Fatalf("segments %+v; want one of 64 MiB in 8 pieces", segs)
	}
	var at uint64
	for i, pc := range segs[0].Pieces {
		if pc.Offset != at || pc.Size != 8*mib {
			t.Fatalf("piece %d at %d of %d bytes; want %d of 8 MiB, tiling the segment", i, pc.Offset, pc.Size, at)
		}
		at += pc.Size
		live := i%2 == 0
		if (pc.Block != nil) != live || (live && pc.Block != blocks[i]) {
			t.Fatalf("piece %d: block %p, want live %v (block %p)", i, pc.Block, live, blocks[i])
		}
	}
	if r := p.Reserved(); r != 64*mib || r != p.Stats().Reserved {
		t.Fatalf("Reserved() = %d, Stats().Reserved = %d; want 64 MiB both", r, p.Stats().Reserved)
	}
	q, err := p.Quota(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if got := q.Segments(); len(got) != 1 || len(got[0].Pieces) != 8 || q.Reserved() != 64*mib {
		t.Fatalf("a quota's segments %+v, reserved %d; want the shared pool's", got, q.Reserved())
	}
}

// Strategy "none" holds a segment per live block.
func TestSegmentsOfStrategyNoneAreItsBlocks(t *testing.T) {
	p := newTestPool(t, newFakeSource(gib), Config{Strategy: StrategyNone})
	a, _ := p.Alloc(3*mib, 0)
	b, _ := p.Alloc(kib, 0)
	segs := p.Segments()
	if len(segs) != 2 || segs[0].Ptr > segs[1].Ptr {
		t.Fatalf("segments %+v; want two, in address order", segs)
	}
	for _, s := range segs {
		if len(s.Pieces) != 1 || (s.Pieces[0].Block != a && s.Pieces[0].Block != b) || s.Pieces[0].Size != s.Size {
			t.Fatalf("segment %+v; want one piece, a whole live block", s)
		}
	}
}

// A live piece covers what its block holds, which is more than was asked
// for when the strategy rounds: a picture that adds up pieces and one that
// adds up blocks' Held agree.
func TestLivePieceIsWhatItsBlockHolds(t *testing.T) {
	for _, c := range []struct {
		strategy string
		src      Source
	}{
		{StrategyCaching, newFakeSource(gib)},
		{StrategyNone, newFakeSource(gib)},
		{StrategyCUDA, newAsyncSource(gib)},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			p := newTestPool(t, c.src, Config{Strategy: c.strategy})
			held := map[*Block]uint64{}
			for _, n := range []uint64{1000, 8200, 3*mib + 1} {
				b := mustAlloc(t, p, n, 0)
				if b.Held() < n {
					t.Fatalf("a block of %d bytes holds %d", n, b.Held())
				}
				held[b] = b.Held()
			}
			var used uint64
			for _, s := range p.Segments() {
				for _, pc := range s.Pieces {
					if pc.Block != nil && pc.Size != held[pc.Block] {
						t.Errorf("the piece of a block of %d bytes is %d; the block holds %d", pc.Block.Size, pc.Size, held[pc.Block])
					}
				}
			}
			for _, n := range held {
				used += n
			}
			if got := p.Stats().Used; got != used {
				t.Errorf("Stats().Used = %d; the blocks hold %d", got, used)
			}
		})
	}
}
