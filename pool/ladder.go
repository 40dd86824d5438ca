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

// climb gives b memory, climbing the ladder: a cached block or a new one
// from the source; then release every cached segment and retry; then let
// the caller collect garbage (Pressure) and retry; then fail with an
// *OOMError. A source error other than out-of-memory is returned at once.
// Called with c.mu held; it is released while Pressure runs.
func (p *Pool) climb(b *Block) error {
	c := p.c
	rounded, ok := c.a.round(b.Size)
	if !ok {
		return p.oomLocked(b.Size, false)
	}
	b.rounded = rounded

	err := p.try(b)
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
		released, rerr := c.a.release(0, true)
		if rerr != nil {
			err = fmt.Errorf("releasing cached memory: %w", rerr)
			return true
		}
		if released == 0 {
			return false
		}
		if countRetry {
			p.countRetry()
		}
		err = p.try(b)
		return err == nil || !isOOM(err)
	}
	if releaseAndTry(true) {
		return err
	}
	if p.pressure != nil {
		p.countRetry()
		c.mu.Unlock()
		p.pressure()
		c.mu.Lock()
		if c.closed || p.closed {
			return errClosed
		}
		if err = p.try(b); err == nil || !isOOM(err) {
			return err
		}
		// What Pressure freed went to the cache, possibly in pieces too
		// small for b: return it and try once more (one retry, counted
		// above).
		if releaseAndTry(false) {
			return err
		}
	}
	return p.oomLocked(b.Size, errors.Is(err, errOverQuota))
}

// try is one rung's attempt: the quota check, then the strategy.
func (p *Pool) try(b *Block) error {
	if p != p.c.root && p.hard > 0 && (b.rounded > p.hard || p.acct.used > p.hard-b.rounded) {
		return errOverQuota
	}
	hit, err := p.c.a.alloc(b)
	if err != nil {
		if isOOM(err) {
			return err
		}
		return fmt.Errorf("allocating %s: %w", formatBytes(b.Size), err)
	}
	p.countAlloc(b, hit)
	return nil
}

// oomLocked builds the error for a request of nbytes that could not be met.
// When a quota view's own limit refused, the figures are the view's;
// otherwise the shared pool ran out, and they are the whole pool's.
func (p *Pool) oomLocked(nbytes uint64, quota bool) error {
	c := p.c
	who := c.root
	if quota {
		who = p
	}
	e := &OOMError{
		Requested:  nbytes,
		HardLimit:  who.hard,
		InUse:      who.acct.used,
		LiveBlocks: who.acct.live,
	}
	if used := c.root.acct.used; c.reserved > used {
		e.Cached = c.reserved - used
	}
	if free, total, err := c.src.MemInfo(); err == nil {
		e.DeviceFree, e.DeviceTotal = free, total
	}
	return e
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
	// ends the message with the setting that would give more.
	Memory, Hint string
}

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
	return msg
}

// Unwrap makes errors.Is(err, device.ErrOutOfMemory) true.
func (e *OOMError) Unwrap() error { return device.ErrOutOfMemory }
