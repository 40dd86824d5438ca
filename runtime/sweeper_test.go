package runtime

import (
	"testing"
	"time"
)

func TestSweeperSpacesOnlyCostlyWalksAndNotPastMaxTriggers(t *testing.T) {
	var s sweeper
	if s.soon(1, 1) {
		t.Fatal("a sweeper that never walked holds back a walk")
	}
	// Two costly walks just now: the next one must wait.
	s.walked(time.Now().Add(-10 * sweepCheap))
	s.walked(time.Now().Add(-10 * sweepCheap))
	if s.cost < sweepCheap {
		t.Fatalf("cost %v after two walks of about %v", s.cost, 10*sweepCheap)
	}
	if !s.soon(1, 1) {
		t.Fatal("a walk right after a costly one is not held back")
	}
	if s.soon(sweepMaxTriggers, 1) {
		t.Fatal("a script past sweepMaxTriggers triggers is still held back")
	}
	// A cheap walk brings the cost down to the lesser of the last two.
	s.walked(time.Now())
	if s.cost >= sweepCheap || s.soon(1, 1) {
		t.Fatalf("after a cheap walk cost is %v and walks are still held back", s.cost)
	}
}
