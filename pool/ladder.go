package pool

import (
	"errors"
	"fmt"

	"github.com/gluaproject/glua/device"
)

// errOverLimit and errOverQuota stand in for the device's own out-of-memory
// error when a limit, not the device, refused: the ladder treats all three
// alike, except that releasing the cache cannot help a quota.
var (
	errOverLimit = fmt.Errorf("hard limit reached: %w", device.ErrOutOfMemory)
	errOverQuota = fmt.Errorf("quota reached: %w", device.ErrOutOfMemory)
)

func isOOM(err error) bool { return errors.Is(err, device.ErrOutOfMemory) }

// climb gives b memory from layer l, climbing the ladder: a cached block
// or a new one from the source; then release every cached segment and
// retry; then let the caller collect garbage (l's Pressure) and retry;
// then fail with an *OOMError. A source error other than out-of-memory is
// returned at once. Called with the pool's lock held; it is released while
// Pressure runs.
func climb(l layer, b *Block) error {
	p := l.base()
	rounded, ok := p.a.round(b.Size)
	if !ok {
		return l.oom(b.Size, nil)
	}
	b.rounded = rounded

	_, err := l.try(b)
	if err == nil || !isOOM(err) {
		return err
	}
	// releaseAndTry returns the cache to the source and, if any went back,
	// tries again; done reports that err is the answer. A quota's limit is
	// not the source's, so releasing cannot help past it.
	releaseAndTry := func(countRetry bool) (done bool) {
		if errors.Is(err, errOverQuota) {
			return false
		}
		released, rerr := p.a.release(0, true)
		if rerr != nil {
			err = fmt.Errorf("releasing cached memory: %w", rerr)
			return true
		}
		if released == 0 {
			return false
		}
		if countRetry {
			l.countRetry()
		}
		_, err = l.try(b)
		return err == nil || !isOOM(err)
	}
	if releaseAndTry(true) {
		return err
	}
	if pressure := l.pressureHook(); pressure != nil {
		l.countRetry()
		p.mu.Unlock()
		pressure()
		p.mu.Lock()
		if l.isClosed() {
			return errClosed
		}
		if _, err = l.try(b); err == nil || !isOOM(err) {
			return err
		}
		// What Pressure freed went to the cache, possibly in pieces too
		// small for b: return it and try once more (one retry, counted
		// above).
		if releaseAndTry(false) {
			return err
		}
	}
	return l.oom(b.Size, err)
}

// oomError builds the error for a request of nbytes that could not be met,
// with the figures of the layer that refused: hard is its limit and a its
// accounting. Cached is always the whole pool's.
func (p *Pool) oomError(nbytes, hard uint64, a *accounting) *OOMError {
	e := &OOMError{
		Requested:  nbytes,
		HardLimit:  hard,
		InUse:      a.used,
		LiveBlocks: a.live,
	}
	if used := p.acct.used; p.c.reserved > used {
		e.Cached = p.c.reserved - used
	}
	if free, total, err := p.c.src.MemInfo(); err == nil {
		e.DeviceFree, e.DeviceTotal = free, total
	}
	return e
}

// noteFragmentation sets e's LargestFree and Unreserved when the pool had
// memory enough for the request, cached and unreserved together, in
// pieces too small for it. Only the caching strategy's pieces are known:
// strategy "cuda"'s cache is the driver's.
func (p *Pool) noteFragmentation(e *OOMError) {
	if p.name != StrategyCaching {
		return
	}
	unreserved := e.DeviceFree
	if h := p.c.hard; h > 0 {
		room := h - min(h, p.c.reserved)
		if e.DeviceTotal == 0 || room < unreserved {
			unreserved = room
		}
	}
	var st Stats
	p.a.describe(&st)
	if e.Cached+unreserved < e.Requested || st.LargestFreeBlock >= e.Requested || unreserved >= e.Requested {
		return
	}
	e.LargestFree, e.Unreserved = st.LargestFreeBlock, unreserved
}

// OOMError is returned when an allocation fails after the whole ladder. It
// says what was asked for and where the memory is; errors.Is(err,
// device.ErrOutOfMemory) holds.
type OOMError struct {
	Requested uint64 // bytes asked for
	HardLimit uint64 // 0: none
	InUse     uint64 // bytes held by live blocks
	// LiveBlocks is the number of live blocks (arrays) holding InUse.
	LiveBlocks int
	// Cached is memory the pool holds but no block uses.
	Cached uint64
	// DeviceFree and DeviceTotal are the device's own figures (0 when the
	// source could not tell).
	DeviceFree, DeviceTotal uint64
	// Memory names what ran out, "GPU memory" when empty; Hint, when set,
	// ends the message's first line with the setting that would give more.
	Memory, Hint string
	// LargestFree and Unreserved are set when fragmentation is why the
	// request failed: Cached and Unreserved (what the hard limit and the
	// device would still let the pool draw) together would have held it,
	// but the largest free block in the cache, LargestFree, is too small
	// and so is Unreserved. Memory that is free but unusable is then
	// visible in the message. Both 0 otherwise.
	LargestFree, Unreserved uint64
	// Holders are where the memory in use was allocated, largest first;
	// the message names the first three. The pool does not know, so its
	// caller fills them in (the runtime: Lua source lines).
	Holders []Holder
}

// Holder is the memory in use by the blocks one place in a program
// allocated, as the pool's caller names that place.
type Holder struct {
	Site   string
	NBytes uint64
	Arrays int
}

// shownHolders is how many Holders the message names: enough to find a
// leak, few enough for one line.
const shownHolders = 3

func (e *OOMError) Error() string {
	memory := e.Memory
	if memory == "" {
		memory = "GPU memory"
	}
	msg := "out of " + memory + ": tried to allocate " + formatBytes(e.Requested) + "; "
	if e.HardLimit > 0 {
		msg += "hard limit " + formatBytes(e.HardLimit) + ", "
	}
	msg += fmt.Sprintf("%s in use by %s, %s cached", formatBytes(e.InUse), plural(e.LiveBlocks, "array", "arrays"), formatBytes(e.Cached))
	if e.DeviceTotal > 0 {
		msg += "; device " + formatBytes(e.DeviceFree) + " free of " + formatBytes(e.DeviceTotal)
	}
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	if len(e.Holders) > 0 {
		msg += "\n  held by "
		for i, h := range e.Holders[:min(len(e.Holders), shownHolders)] {
			if i > 0 {
				msg += "; "
			}
			msg += fmt.Sprintf("%s: %s in %s", h.Site, formatBytes(h.NBytes), plural(h.Arrays, "array", "arrays"))
		}
		if more := len(e.Holders) - shownHolders; more > 0 {
			msg += "; " + plural(more, "other place", "other places")
		}
	}
	if e.LargestFree > 0 || e.Unreserved > 0 {
		msg += fmt.Sprintf("\n  fragmented: %s is free (%s cached, %s unreserved) but the largest free block is %s",
			formatBytes(e.Cached+e.Unreserved), formatBytes(e.Cached), formatBytes(e.Unreserved), formatBytes(e.LargestFree))
	}
	return msg
}

// Unwrap makes errors.Is(err, device.ErrOutOfMemory) true.
func (e *OOMError) Unwrap() error { return device.ErrOutOfMemory }
