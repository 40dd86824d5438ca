package pool

import (
	"errors"
	"fmt"
	"math"

	"github.com/gluaproject/glua/device"
)

// asyncAlloc is strategy "cuda": the driver's stream-ordered pool does the
// caching (cuMemAllocAsync/cuMemFreeAsync), and Go keeps the accounting and
// the hard limit. The driver's cache is invisible here, so Reserved counts
// the live blocks and cached memory is steered through the release
// threshold (the soft limit) and TrimTo.
type asyncAlloc struct {
	c  *core
	as AsyncSource
	// live lets Close return what blocks still hold.
	live map[*Block]struct{}
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
	if h := c.root.hard; h > 0 && (b.rounded > h || c.reserved > h-b.rounded) {
		return false, errOverLimit
	}
	ptr, err := a.as.AllocAsync(b.rounded, b.Stream)
	if err != nil {
		return false, err
	}
	c.reserve(b.rounded)
	b.Ptr = ptr
	a.live[b] = struct{}{}
	return false, nil
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
	a.c.unreserve(b.rounded)
	return a.as.FreeAsync(b.Ptr, b.Stream)
}

// poll hands to the driver the waiting blocks whose other streams are done.
func (a *asyncAlloc) poll() {
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
		a.c.unreserve(w.b.rounded)
		_ = a.as.FreeAsync(w.b.Ptr, w.b.Stream) // the memory is the driver's again either way
	}
	a.waiting = kept
}

// release trims the driver's cache. How much went back is read from the
// device's free memory, the only view of the driver's cache there is.
func (a *asyncAlloc) release(nbytes uint64, thorough bool) (uint64, error) {
	c := a.c
	if thorough && c.syncer != nil && len(a.waiting) > 0 {
		if err := c.syncer.Synchronize(); err != nil {
			return 0, err
		}
	}
	a.poll()
	before, _, err1 := c.src.MemInfo()
	if err := a.as.TrimTo(0); err != nil {
		return 0, err
	}
	after, _, err2 := c.src.MemInfo()
	if err1 != nil || err2 != nil || after <= before {
		return 0, nil
	}
	c.reclaims++
	return after - before, nil
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

func (a *asyncAlloc) describe(st *Stats) { st.Segments = len(a.live) + len(a.waiting) }

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
		c.unreserve(b.rounded)
		if err := a.as.FreeAsync(b.Ptr, b.Stream); err != nil {
			errs = append(errs, err)
		}
		b.freed = true
	}
	clear(a.live)
	if err := a.as.TrimTo(0); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
