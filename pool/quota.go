package pool

import (
	"errors"
	"fmt"

	"github.com/gluaproject/glua/device"
)

// Quota is a view of a Pool with limits of its own, as RMM stacks
// limiting(pool(source)): several runtimes draw on one caching pool while
// none takes more than its share. It wraps the pool: its own hard limit,
// soft limit, Pressure and accounting are applied here, and everything
// else (the cache, the source, the pool's own limits) is the pool's. Its
// blocks count in the pool's figures too.
type Quota struct {
	up   *Pool
	self layer // q, for its Blocks to point at

	// Guarded by up's lock.
	soft, hard uint64
	pressure   func()
	acct       accounting
	// live lets Close free what the quota still holds; the pool's Close
	// returns whole segments instead, so only a quota keeps its blocks.
	live   map[*Block]struct{}
	closed bool
}

// Quota returns a view of p that shares its allocator and cache but has
// limits of its own. cfg.HardLimit caps the bytes the view's live blocks
// hold; cfg.SoftLimit, when set, trims the shared cache after the view's
// frees; cfg.Pressure is the view's own third rung. cfg.Strategy must be
// empty or p's strategy. Closing the view frees its live blocks into the
// shared pool.
func (p *Pool) Quota(cfg Config) (*Quota, error) {
	if cfg.Strategy != "" && cfg.Strategy != p.name {
		return nil, fmt.Errorf("a quota's strategy %q differs from the pool's %q", cfg.Strategy, p.name)
	}
	if err := checkLimits(cfg.SoftLimit, cfg.HardLimit); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errClosed
	}
	q := &Quota{up: p, soft: cfg.SoftLimit, hard: cfg.HardLimit, pressure: cfg.Pressure, live: make(map[*Block]struct{})}
	q.self = q
	q.acct.peakReserved = p.c.reserved
	p.c.peaks = append(p.c.peaks, &q.acct)
	return q, nil
}

// Quota refuses: quotas do not nest. A runtime holds one quota of the
// shared pool, and a quota of a quota has no use there.
func (q *Quota) Quota(Config) (*Quota, error) {
	return nil, errors.New("pool.Quota: a quota view cannot have views of its own; call Quota on the pool itself")
}

// Strategy is the pool's.
func (q *Quota) Strategy() string { return q.up.Strategy() }

// Alloc is the pool's Alloc within the quota's hard limit; past it, the
// ladder skips releasing the cache (the cache is not what the limit
// counts) and the *OOMError gives the quota's figures.
func (q *Quota) Alloc(nbytes uint64, s device.Stream) (*Block, error) {
	return alloc(q.up, &q.self, nbytes, s)
}

// AllocInto is Alloc into a Block the caller provides (see Pool.AllocInto).
func (q *Quota) AllocInto(b *Block, nbytes uint64, s device.Stream) error {
	return allocInto(q.up, &q.self, b, nbytes, s)
}

// Free is the pool's: the block's own layer is credited whichever frees it.
func (q *Quota) Free(b *Block) error { return q.up.Free(b) }

// RecordStream is the pool's.
func (q *Quota) RecordStream(b *Block, s device.Stream) { q.up.RecordStream(b, s) }

// Reclaim releases the shared cache, as the pool's Reclaim does.
func (q *Quota) Reclaim(nbytes uint64) (uint64, error) { return q.up.Reclaim(nbytes) }

// Synchronized is the pool's, trimming the cache to the tighter of the
// quota's and the pool's soft limits.
func (q *Quota) Synchronized() { q.up.synchronized(q) }

// Close frees what the quota still holds into the shared pool and detaches
// it; the pool stays open.
func (q *Quota) Close() error {
	p := q.up
	p.mu.Lock()
	defer p.mu.Unlock()
	if q.isClosed() {
		return nil
	}
	var errs []error
	for b := range q.live {
		if err := q.free(b); err != nil {
			errs = append(errs, err)
		}
	}
	q.closed = true
	for i, a := range p.c.peaks {
		if a == &q.acct {
			p.c.peaks = append(p.c.peaks[:i], p.c.peaks[i+1:]...)
			break
		}
	}
	return errors.Join(errs...)
}

// The quota as a layer: its checks and figures, then the pool's.

func (q *Quota) base() *Pool          { return q.up }
func (q *Quota) isClosed() bool       { return q.closed || q.up.closed }
func (q *Quota) pressureHook() func() { return q.pressure }
func (q *Quota) softTarget() uint64   { return tightest(q.soft, q.up.soft) }

func (q *Quota) try(b *Block) (bool, error) {
	if q.hard > 0 && (b.rounded > q.hard || q.acct.used > q.hard-b.rounded) {
		return false, errOverQuota
	}
	hit, err := q.up.try(b)
	if err != nil {
		return false, err
	}
	q.acct.alloc(b, hit)
	q.live[b] = struct{}{}
	return hit, nil
}

func (q *Quota) countZero(b *Block) {
	q.acct.zero()
	q.live[b] = struct{}{}
	q.up.countZero(b)
}

func (q *Quota) countRetry() {
	q.acct.oomRetries++
	q.up.countRetry()
}

// oom gives the quota's figures when its own limit refused; otherwise the
// shared pool ran out, and they are the pool's.
func (q *Quota) oom(nbytes uint64, refusal error) error {
	if errors.Is(refusal, errOverQuota) {
		return q.up.oomError(nbytes, q.hard, &q.acct)
	}
	return q.up.oom(nbytes, refusal)
}

func (q *Quota) free(b *Block) error {
	q.acct.free(b)
	delete(q.live, b)
	err := q.up.freeBlock(b)
	if terr := q.up.trimTo(q.softTarget()); err == nil {
		err = terr
	}
	return err
}

// Limits returns the quota's soft and hard limits (0: none).
func (q *Quota) Limits() (soft, hard uint64) {
	q.up.mu.Lock()
	defer q.up.mu.Unlock()
	return q.soft, q.hard
}

// SetLimits sets the quota's limits. A lower soft limit releases the
// shared cache down to it; a hard limit below what the quota's live blocks
// hold is refused, and both limits stay as they were.
func (q *Quota) SetLimits(soft, hard uint64) error {
	p := q.up
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := checkLimits(soft, hard); err != nil {
		return err
	}
	if q.isClosed() {
		return errClosed
	}
	oldSoft, oldHard := q.soft, q.hard
	q.soft, q.hard = soft, hard
	released, err := p.releaseTo(soft)
	if err != nil {
		return err
	}
	if hard == 0 || q.acct.used <= hard {
		return nil
	}
	q.soft, q.hard = oldSoft, oldHard
	short := fmt.Sprintf("hard limit %s is below the %s this quota's blocks hold", formatBytes(hard), formatBytes(q.acct.used))
	return p.limitRefused(short, released, &q.acct, oldSoft, oldHard)
}

// Stats returns the quota's figures: its own blocks and counters, and the
// shared pool's Reserved, PeakReserved since the quota began or its last
// ResetPeak, Reclaims, Segments and LargestFreeBlock.
func (q *Quota) Stats() Stats {
	q.up.mu.Lock()
	defer q.up.mu.Unlock()
	return q.up.statsLocked(&q.acct, q.soft, q.hard)
}

// ResetPeak starts PeakUsed and PeakReserved again from the current figures.
func (q *Quota) ResetPeak() {
	q.up.mu.Lock()
	defer q.up.mu.Unlock()
	q.acct.resetPeak(q.up.c.reserved)
}
