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

// tightest is the lower of two limits, 0 (none) counting as no bound.
func tightest(a, b uint64) uint64 {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// Limits returns the soft and hard limits (0: none).
func (p *Pool) Limits() (soft, hard uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.soft, p.c.hard
}

// SetLimits sets the soft and hard limits (0: none). Limits below what the
// pool holds take effect at once: cached memory is released to meet them.
// The soft limit is a target for the cache, so live blocks above it are no
// error. A hard limit that live blocks keep the pool above is refused: the
// error says by how much, and both limits stay as they were (the cache
// released on the way stays released).
func (p *Pool) SetLimits(soft, hard uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := checkLimits(soft, hard); err != nil {
		return err
	}
	if p.closed {
		return errClosed
	}
	oldSoft, oldHard := p.soft, p.c.hard
	if err := p.applyLimits(soft, hard); err != nil {
		return err
	}
	released, err := p.releaseTo(tightest(soft, hard))
	if err != nil {
		return err
	}
	if hard == 0 || p.c.reserved <= hard {
		return nil
	}
	if err := p.applyLimits(oldSoft, oldHard); err != nil {
		return err
	}
	short := fmt.Sprintf("hard limit %s is below the %s still reserved", formatBytes(hard), formatBytes(p.c.reserved))
	return p.limitRefused(short, released, &p.acct, oldSoft, oldHard)
}

// applyLimits sets p's limits and tells the strategy.
func (p *Pool) applyLimits(soft, hard uint64) error {
	p.soft, p.c.hard = soft, hard
	return p.a.limitsChanged(soft, hard)
}

// limitRefused is the error of a SetLimits refused because short, on the
// layer whose figures are a; released is the cache let go on the way.
func (p *Pool) limitRefused(short string, released uint64, a *accounting, oldSoft, oldHard uint64) error {
	cached := uint64(0)
	if p.c.reserved > p.acct.used {
		cached = p.c.reserved - p.acct.used
	}
	return fmt.Errorf("%s (released %s; %s in use by %s, %s cached in segments that also hold live blocks); the limits stay soft %s, hard %s: free arrays first",
		short, formatBytes(released), formatBytes(a.used), plural(a.live, "live block", "live blocks"), formatBytes(cached),
		limitString(oldSoft), limitString(oldHard))
}

func limitString(n uint64) string {
	if n == 0 {
		return "none"
	}
	return formatBytes(n)
}

// releaseTo releases cached memory, waiting for the device if need be,
// until no more than target bytes are reserved (0: no target).
func (p *Pool) releaseTo(target uint64) (released uint64, err error) {
	if target == 0 || p.c.reserved <= target {
		return 0, nil
	}
	released, err = p.a.release(p.c.reserved-target, true)
	if err != nil {
		return released, fmt.Errorf("releasing cached memory: %w", err)
	}
	return released, nil
}

// trimTo releases cached memory above target bytes (0: no target) without
// waiting for the device: it runs after every free.
func (p *Pool) trimTo(target uint64) error {
	if target == 0 || p.c.reserved <= target {
		return nil
	}
	_, err := p.a.release(p.c.reserved-target, false)
	return err
}
