package pool

import (
	"errors"
	"fmt"
)

// Quota returns a view of p that shares its allocator and cache but has
// limits of its own, as RMM stacks limiting(pool(source)): several runtimes
// can draw on one caching pool while none takes more than its share.
// cfg.HardLimit caps the bytes the view's live blocks hold; cfg.SoftLimit,
// when set, trims the shared cache after the view's frees; cfg.Pressure is
// the view's own third rung. cfg.Strategy must be empty or p's strategy.
// Closing the view frees its live blocks into the shared pool.
func (p *Pool) Quota(cfg Config) (*Pool, error) {
	c := p.c
	if cfg.Strategy != "" && cfg.Strategy != c.strategy {
		return nil, fmt.Errorf("a quota's strategy %q differs from the pool's %q", cfg.Strategy, c.strategy)
	}
	if err := checkLimits(cfg.SoftLimit, cfg.HardLimit); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClosed
	}
	if p != c.root {
		return nil, errors.New("pool.Quota: a quota view cannot have views of its own; call Quota on the pool itself")
	}
	v := &Pool{c: c, soft: cfg.SoftLimit, hard: cfg.HardLimit, pressure: cfg.Pressure, live: make(map[*Block]struct{})}
	v.acct.peakReserved = c.reserved
	c.views = append(c.views, v)
	return v, nil
}

// closeView frees what the view still holds and detaches it.
func (p *Pool) closeView() error {
	var errs []error
	for b := range p.live {
		if err := p.freeLocked(b); err != nil {
			errs = append(errs, err)
		}
	}
	p.closed = true
	c := p.c
	for i, v := range c.views {
		if v == p {
			c.views = append(c.views[:i], c.views[i+1:]...)
			break
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return nil
}
