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
func (p *Pool) oomError(nbytes, hard uint64, a *accounting) error {
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
