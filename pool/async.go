package pool

import (
	"errors"
	"fmt"
	"math"

	"github.com/gluaproject/glua/device"
)

// asyncAlloc is strategy "cuda": the driver's stream-ordered pool does the
// caching (cuMemAllocAsync/cuMemFreeAsync), and Go keeps the accounting and
// the hard limit. Reserved is what the driver's pool holds, read after every
// call that can change it, so the driver's cache counts against the hard
// limit like the caching strategy's own; cached memory is steered through
// the release threshold (the soft limit) and TrimTo.
type asyncAlloc struct {
	c  *core
	as AsyncSource
	// live lets Close return what blocks still hold; liveBytes is their
	// rounded sizes, the floor of Reserved whatever the driver says.
	live      map[*Block]struct{}
	liveBytes uint64
	// waiting holds blocks used on other streams (RecordStream): they are
	// handed to FreeAsync only when those streams' events are done, because
	// a free ordered on the block's own stream would not wait for them.
	waiting []waitingFree
}

type waitingFree struct {
	b      *Block
	events []device.Event
}

func newAsync(c *core, as AsyncSource) *asyncAlloc {
	return &asyncAlloc{c: c, as: as, live: make(map[*Block]struct{})}
}

// round is the caching strategy's: the driver rounds further itself, and
// the same rounding keeps Used comparable across strategies.
func (a *asyncAlloc) round(nbytes uint64) (uint64, bool) {
	if nbytes > math.MaxUint64-granularity {
		return 0, false
	}
	return roundUp(nbytes, granularity), true
}

func (a *asyncAlloc) alloc(b *Block) (bool, error) {
	a.poll()
	c := a.c
	h := c.hard
	if h > 0 {
		if b.rounded > h || a.liveBytes > h-b.rounded {
			return false, errOverLimit
		}
		if c.reserved > h-b.rounded {
			// Room is there once the driver lets go of some of its cache.
			_ = a.as.TrimTo(h - b.rounded)
			a.readReserved()
		}
	}
	ptr, err := a.as.AllocAsync(b.rounded, b.Stream)
	if err != nil {
		return false, err
	}
	a.liveBytes += b.rounded
	a.readReserved()
	if h > 0 && c.reserved > h {
		// The driver grew its pool past the limit (it reserves in chunks
		// of its own choosing): give the block back, trim, and let the
		// ladder decide.
		a.liveBytes -= b.rounded
		err := a.as.FreeAsync(ptr, b.Stream)
		if c.syncer != nil {
			// The free is stream-ordered: the driver can trim the memory
			// only once the stream has reached it.
			_ = c.syncer.Synchronize()
		}
		_ = a.as.TrimTo(h)
		a.readReserved()
		if err != nil {
			return false, err
		}
		return false, errOverLimit
	}
	b.Ptr = ptr
	a.live[b] = struct{}{}
	return false, nil
}

// readReserved sets Reserved to what the driver's pool holds, never less
// than the live blocks; when the driver cannot say, to the live blocks.
func (a *asyncAlloc) readReserved() {
	c := a.c
	n, err := a.as.PoolReserved()
	if err != nil {
		n = 0
	}
	n = max(n, a.liveBytes)
	if n >= c.reserved {
		c.reserve(n - c.reserved)
	} else {
		c.unreserve(c.reserved - n)
	}
}

func (a *asyncAlloc) free(b *Block) error {
	delete(a.live, b)
	if len(b.uses) > 0 && a.c.events != nil {
		w := waitingFree{b: b}
		for _, s := range b.uses {
			ev, err := a.c.events.NewEvent()
			if err == nil {
				err = a.c.events.Record(ev, s)
			}
			if err != nil {
				// Without the event the free cannot be ordered after s:
				// keep the block's memory until the pool closes.
				a.live[b] = struct{}{}
				for _, e := range append(w.events, ev) {
					_ = a.c.events.DestroyEvent(e)
				}
				return fmt.Errorf("recording the block's use on stream %#x (its memory is kept until the pool closes): %w", uintptr(s), err)
			}
			w.events = append(w.events, ev)
		}
		a.waiting = append(a.waiting, w)
		return nil
	}
	a.liveBytes -= b.rounded
	err := a.as.FreeAsync(b.Ptr, b.Stream)
	a.readReserved()
	return err
}

// poll hands to the driver the waiting blocks whose other streams are done.
func (a *asyncAlloc) poll() {
	freed := false
	kept := a.waiting[:0]
	for _, w := range a.waiting {
		done := true
		for _, ev := range w.events {
			if ok, err := a.c.events.EventDone(ev); err != nil || !ok {
				done = false
				break
			}
		}
		if !done {
			kept = append(kept, w)
			continue
		}
		for _, ev := range w.events {
			_ = a.c.events.DestroyEvent(ev)
		}
		a.liveBytes -= w.b.rounded
		_ = a.as.FreeAsync(w.b.Ptr, w.b.Stream) // the memory is the driver's again either way
		freed = true
	}
	a.waiting = kept
	if freed {
		a.readReserved()
	}
}

// release trims the driver's cache, to what is live plus the cache that
// may stay when only nbytes were asked for.
func (a *asyncAlloc) release(nbytes uint64, thorough bool) (uint64, error) {
	c := a.c
	if thorough && c.syncer != nil {
		// Frees are stream-ordered: the driver trims memory only once its
		// stream has reached the free, and blocks waiting on other streams
		// can go back only once those are done.
		if err := c.syncer.Synchronize(); err != nil {
			return 0, err
		}
	}
	a.poll()
	a.readReserved()
	before := c.reserved
	keep := uint64(0)
	if nbytes > 0 && before > nbytes {
		keep = before - nbytes
	}
	err := a.as.TrimTo(keep)
	a.readReserved()
	if err != nil {
		return 0, err
	}
	if c.reserved >= before {
		return 0, nil
	}
	c.reclaims++
	return before - c.reserved, nil
}

func (a *asyncAlloc) synchronized() { a.poll() }

// limitsChanged sets the driver's release threshold: with no soft limit the
// driver keeps what it caches (up to the hard limit), as the caching
// strategy would; the driver's default of 0 would free at every sync.
func (a *asyncAlloc) limitsChanged(soft, hard uint64) error {
	threshold := uint64(math.MaxUint64)
	if hard > 0 {
		threshold = hard
	}
	if soft > 0 {
		threshold = min(threshold, soft)
	}
	if err := a.as.SetReleaseThreshold(threshold); err != nil {
		return fmt.Errorf("setting the driver pool's release threshold: %w", err)
	}
	return nil
}

func (a *asyncAlloc) describe(st *Stats) {
	// The driver may have trimmed its cache at a synchronisation since the
	// last call.
	a.readReserved()
	st.Segments = len(a.live) + len(a.waiting)
}

func (a *asyncAlloc) close() error {
	c := a.c
	var errs []error
	if c.syncer != nil {
		if err := c.syncer.Synchronize(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, w := range a.waiting {
		for _, ev := range w.events {
			_ = c.events.DestroyEvent(ev)
		}
		a.live[w.b] = struct{}{}
	}
	a.waiting = nil
	for b := range a.live {
		if err := a.as.FreeAsync(b.Ptr, b.Stream); err != nil {
			errs = append(errs, err)
		}
		b.freed = true
	}
	clear(a.live)
	a.liveBytes = 0
	if err := a.as.TrimTo(0); err != nil {
		errs = append(errs, err)
	}
	c.unreserve(c.reserved)
	return errors.Join(errs...)
}
