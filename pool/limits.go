package pool

import (
	"fmt"
)

// checkLimits rejects a soft limit above the hard one: memory above the
// hard limit can never be reserved, so such a soft limit would never act.
func checkLimits(soft, hard uint64) error {
	if hard > 0 && soft > hard {
		return fmt.Errorf("soft limit %s is above hard limit %s", formatBytes(soft), formatBytes(hard))
	}
	return nil
}

// Limits returns the soft and hard limits (0: none).
func (p *Pool) Limits() (soft, hard uint64) {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	return p.soft, p.hard
}

// SetLimits sets the soft and hard limits (0: none). Limits below what the
// pool holds take effect at once: cached memory is released to meet them.
// The soft limit is a target for the cache, so live blocks above it are no
// error. A hard limit that live blocks keep the pool above is refused: the
// error says by how much, and both limits stay as they were (the cache
// released on the way stays released).
func (p *Pool) SetLimits(soft, hard uint64) error {
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := checkLimits(soft, hard); err != nil {
		return err
	}
	if c.closed || p.closed {
		return errClosed
	}
	oldSoft, oldHard := p.soft, p.hard
	if err := p.applyLimits(soft, hard); err != nil {
		return err
	}

	// The tightest target among the limits that bind reserved memory.
	var target uint64
	for _, l := range []uint64{soft, p.rootHard()} {
		if l > 0 && (target == 0 || l < target) {
			target = l
		}
	}
	var released uint64
	if target > 0 && c.reserved > target {
		r, err := c.a.release(c.reserved-target, true)
		released = r
		if err != nil {
			return fmt.Errorf("releasing cached memory: %w", err)
		}
	}

	var short string
	if p == c.root {
		if hard > 0 && c.reserved > hard {
			short = fmt.Sprintf("hard limit %s is below the %s still reserved", formatBytes(hard), formatBytes(c.reserved))
		}
	} else if hard > 0 && p.acct.used > hard {
		short = fmt.Sprintf("hard limit %s is below the %s this quota's blocks hold", formatBytes(hard), formatBytes(p.acct.used))
	}
	if short == "" {
		return nil
	}
	if err := p.applyLimits(oldSoft, oldHard); err != nil {
		return err
	}
	cached := uint64(0)
	if c.reserved > c.root.acct.used {
		cached = c.reserved - c.root.acct.used
	}
	return fmt.Errorf("%s (released %s; %s in use by %s, %s cached in segments that also hold live blocks); the limits stay soft %s, hard %s: free arrays first",
		short, formatBytes(released), formatBytes(p.acct.used), plural(p.acct.live, "live block", "live blocks"), formatBytes(cached),
		limitString(oldSoft), limitString(oldHard))
}

// applyLimits sets p's limits and tells the strategy of the root's.
func (p *Pool) applyLimits(soft, hard uint64) error {
	p.soft, p.hard = soft, hard
	if p == p.c.root {
		return p.c.a.limitsChanged(soft, hard)
	}
	return nil
}

func limitString(n uint64) string {
	if n == 0 {
		return "none"
	}
	return formatBytes(n)
}

// rootHard is the hard limit that binds reserved memory: the root's own;
// on a view it is the root's (the view's caps its blocks, not the cache).
func (p *Pool) rootHard() uint64 {
	if p == p.c.root {
		return p.hard
	}
	return 0
}

// trimToSoft releases cached memory above the soft limits that apply to p:
// its own and, for a view, the root's.
func (p *Pool) trimToSoft() error {
	c := p.c
	target := p.soft
	if r := c.root; r != p && r.soft > 0 && (target == 0 || r.soft < target) {
		target = r.soft
	}
	if target == 0 || c.reserved <= target {
		return nil
	}
	_, err := c.a.release(c.reserved-target, false)
	return err
}
