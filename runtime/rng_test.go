package runtime

import "testing"

func TestUnseededDrawsFollowOnAndSeedRestartsTheSequence(t *testing.T) {
	var g rng
	g.reset(7)
	if s, off := g.start(nil); s != 7 || off != 0 {
		t.Fatalf("first draw after reset(7) starts at (%d, %d), want (7, 0)", s, off)
	}
	g.advance(5)
	if s, off := g.start(nil); s != 7 || off != 5 {
		t.Fatalf("second draw starts at (%d, %d), want (7, 5): it must not repeat the first", s, off)
	}
	own := uint64(42)
	if s, off := g.start(&own); s != 42 || off != 0 {
		t.Fatalf("seeded draw starts at (%d, %d), want its own seed from 0 (42, 0)", s, off)
	}
	g.reset(7)
	if s, off := g.start(nil); s != 7 || off != 0 {
		t.Fatalf("draw after a second reset(7) starts at (%d, %d), want (7, 0)", s, off)
	}
}

func TestNewGeneratorsDrawDifferentNumbers(t *testing.T) {
	a, b := newRNG(), newRNG()
	if a.seed == b.seed {
		t.Fatalf("two fresh generators share seed %d", a.seed)
	}
	if a.offset != 0 {
		t.Fatalf("fresh generator starts at counter %d, want 0", a.offset)
	}
}
