package runtime

import (
	"testing"

	"github.com/gluaproject/glua/device"
)

// The graph part keeps its own books without a Runtime: graph states and
// buffers stand in for what captures would have made.
func TestGraphPartCountsHeldMemoryOncePerBufferAndSkipsReplayingGraphs(t *testing.T) {
	var g graphPart
	a, b := &buffer{}, &buffer{}
	a.blk.Size, b.blk.Size = 256, 1024
	rec1 := &graphState{held: []*buffer{a, b}}
	rec2 := &graphState{held: []*buffer{a}}
	again := &graphState{replay: func() error { return nil }, held: []*buffer{b}}
	g.add(rec1)
	g.add(rec2)
	g.add(again)
	g.orphan(a.blk.Size)
	graphs, held, orphaned := g.memory()
	if graphs != 2 || held != 1280 || orphaned != 256 {
		t.Fatalf("memory() = %d graphs, %d held, %d orphaned; want 2, 1280, 256", graphs, held, orphaned)
	}
	if len(g.all()) != 3 {
		t.Fatalf("all() lists %d graphs, want 3", len(g.all()))
	}
	g.remove(rec1)
	g.adopt(a.blk.Size)
	graphs, held, orphaned = g.memory()
	if graphs != 1 || held != 256 || orphaned != 0 || g.orphanN != 0 {
		t.Fatalf("after remove and adopt: %d graphs, %d held, %d orphaned (%d arrays); want 1, 256, 0 (0)", graphs, held, orphaned, g.orphanN)
	}
}

func TestGraphPartHandsOverQueuedGraphsOnce(t *testing.T) {
	var g graphPart
	st := &graphState{}
	g.queue(st)
	if p := g.takePending(); len(p) != 1 || p[0] != st {
		t.Fatalf("takePending() = %v, want the queued graph", p)
	}
	if p := g.takePending(); len(p) != 0 {
		t.Fatalf("second takePending() = %v, want none", p)
	}
}

func TestGraphPartIsBusyDuringCaptureOrReplayAndOrdersByTheCapturedStream(t *testing.T) {
	var g graphPart
	const own, saved device.Stream = 7, 3
	if g.busy() || g.orderStream(own) != own {
		t.Fatalf("idle part: busy %v, orderStream %d; want false, %d", g.busy(), g.orderStream(own), own)
	}
	g.capture = &capture{order: saved}
	if !g.busy() || g.orderStream(own) != saved {
		t.Fatalf("capturing: busy %v, orderStream %d; want true, %d", g.busy(), g.orderStream(own), saved)
	}
	g.capture = nil
	g.replaying++
	if !g.busy() || g.orderStream(own) != own {
		t.Fatalf("replaying: busy %v, orderStream %d; want true, %d", g.busy(), g.orderStream(own), own)
	}
}
