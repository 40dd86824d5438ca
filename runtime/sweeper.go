package runtime

import (
	"time"

	"github.com/gluaproject/glua/internal/luaheap"
)

// sweeper holds the state of sweepScript's walks of the Lua state and
// decides how they are spaced. Only the runtime's goroutine touches it,
// so it needs no lock; the buffer list it compares marks against stays
// under rt.mu.
type sweeper struct {
	walker *luaheap.Walker
	// mark is the current walk's number: what it reaches carries it.
	mark uint32
	// dead is the reused list of buffers a walk found unreached.
	dead []*buffer
	last time.Time
	// cost is the lesser of the last two walks' own costs; prevCost is
	// the last walk's.
	cost, prevCost time.Duration
}

// walked records a complete walk that began at start.
func (s *sweeper) walked(start time.Time) {
	s.last = time.Now()
	// The cheaper of the last two walks: a walk's one-off costs (the
	// first, which sizes the walker's set and learns the userdata types)
	// do not space out the walks after it.
	cost := s.last.Sub(start)
	s.cost, s.prevCost = min(cost, s.prevCost), cost
}

// soon reports whether a walk now would come too soon after the last
// one for the time walks take; allocated is how far past the trigger the
// script is, in triggers.
func (s *sweeper) soon(allocated, trigger uint64) bool {
	if s.cost < sweepCheap || allocated >= sweepMaxTriggers*trigger {
		return false
	}
	return time.Since(s.last) < sweepMinInterval*s.cost
}
