package pool

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gluaproject/glua/device"
)

// Strategy names accepted by Config.Strategy.
const (
	StrategyCaching = "caching"
	StrategyNone    = "none"
	StrategyCUDA    = "cuda"
)

var strategies = []string{StrategyCaching, StrategyNone, StrategyCUDA}

// Config chooses how a Pool allocates and what it may hold.
type Config struct {
	// Strategy is "caching" (the default when empty), "none" (every
	// allocation goes straight to the source) or "cuda" (the driver's
	// stream-ordered pool; needs a Source that is also an AsyncSource).
	Strategy string
	// SoftLimit, when not 0, is how much reserved memory the pool may keep:
	// cached memory above it is released after frees and at Synchronized.
	SoftLimit uint64
	// HardLimit, when not 0, caps reserved memory (everything obtained from
	// the source); it is checked before every allocation. On a Quota it
	// caps the bytes the quota's live blocks hold.
	HardLimit uint64
	// Pressure is the ladder's third rung: the caller runs Go's GC and
	// frees, through Free, the blocks its cleanups queued. It is called
	// without the pool's lock held, so it may call Free; it must not
	// allocate from the pool, or the ladder would recurse. May be nil.
	Pressure func()
}

// Allocator is what a runtime draws device memory from: a Pool, or a Quota
// wrapping one as RMM's limiting adaptor wraps its upstream resource, so
// that the runtime holds either without asking which. All methods are safe
// for concurrent use.
type Allocator interface {
	Alloc(nbytes uint64, s device.Stream) (*Block, error)
	AllocInto(b *Block, nbytes uint64, s device.Stream) error
	Free(b *Block) error
	RecordStream(b *Block, s device.Stream)
	Reclaim(nbytes uint64) (released uint64, err error)
	Synchronized()
	Close() error
	Stats() Stats
	ResetPeak()
	Limits() (soft, hard uint64)
	SetLimits(soft, hard uint64) error
	Strategy() string
	Segments() []Segment
	Reserved() uint64
}

var (
	_ Allocator = (*Pool)(nil)
	_ Allocator = (*Quota)(nil)
)

// Pool hands out device memory in Blocks. All its methods are safe for
// concurrent use; several runtimes may share one Pool, or each hold a
// Quota of one.
type Pool struct {
	mu   sync.Mutex
	name string // the strategy's
	self layer  // p, for its Blocks to point at

	// Guarded by mu.
	a        strategy
	c        core
	soft     uint64
	pressure func()
	acct     accounting
	closed   bool
}

// core is what the strategies draw on: the source and what it can do, the
// memory reserved from it, and the hard limit that caps that. The soft
// limit is not here: it trims the cache from above, and a strategy is only
// told of it (limitsChanged).
type core struct {
	src    Source
	events EventSource        // nil for a synchronous source
	syncer DeviceSynchronizer // nil when the source cannot wait for the device

	hard     uint64
	reserved uint64
	reclaims uint64 // segments (or driver trims) returned to the source
	// peaks are the accountings whose PeakReserved follows reserved: the
	// pool's own and each open quota's, since the figure is the pool's.
	peaks []*accounting
}

// strategy is one way of drawing on the source. Every method is called
// with the pool's lock held.
type strategy interface {
	// round is the number of bytes a request of nbytes holds; ok is false
	// when no device could hold it (the rounding would overflow).
	round(nbytes uint64) (rounded uint64, ok bool)
	// alloc gives b (Size, Stream and rounded set) memory from the cache
	// or the source. hit reports a cache hit. An error wrapping
	// device.ErrOutOfMemory makes the ladder climb; any other is final.
	alloc(b *Block) (hit bool, err error)
	// free takes b's memory back; b's accounting is the caller's.
	free(b *Block) error
	// release returns cached memory to the source until at least nbytes
	// went back (0: all it can). thorough allows waiting for the device,
	// which frees memory still waiting on other streams' work.
	release(nbytes uint64, thorough bool) (released uint64, err error)
	// synchronized is told of a synchronisation point.
	synchronized()
	// limitsChanged is told the pool's new limits.
	limitsChanged(soft, hard uint64) error
	// segments lists the memory drawn from the source (see Pool.Segments).
	segments() []Segment
	// describe fills the strategy's part of Stats (Segments,
	// LargestFreeBlock), after bringing reserved up to date if the
	// strategy cannot know it otherwise.
	describe(st *Stats)
	// close returns every byte, live or cached, to the source.
	close() error
}

// layer is a Pool or a Quota on one: what the ladder climbs, and what a
// Block keeps of where it came from, so that whichever Allocator frees it
// credits the layer that lent it. Every method is called with the pool's
// lock held.
type layer interface {
	// base is the pool underneath, whose lock guards every layer on it.
	base() *Pool
	isClosed() bool
	// try is one attempt to give b (Size, Stream and rounded set) memory;
	// a success is counted.
	try(b *Block) (hit bool, err error)
	countZero(b *Block)
	countRetry()
	pressureHook() func()
	// softTarget is the tightest soft limit that applies (0: none): the
	// cache is trimmed to it after the layer's frees.
	softTarget() uint64
	// oom is the error for a request of nbytes that the ladder could not
	// meet; refusal is the last attempt's error.
	oom(nbytes uint64, refusal error) error
	// free takes b back, counts it and trims the cache to the soft limits
	// that apply.
	free(b *Block) error
}

// Block is one allocation. Ptr, Size and Stream are read-only for callers.
type Block struct {
	Ptr device.Ptr
	// Size is the number of bytes asked for; the block may hold more.
	Size uint64
	// Stream is the stream the block was allocated for.
	Stream device.Stream

	// owner is the layer that lent the block, reached through the layer's
	// self: one word where the interface would take two, which keeps a
	// Block in the 80-byte size class (measured: 96 bytes a Pool.Alloc
	// otherwise).
	owner   *layer
	rounded uint64          // bytes the block holds (counted in Used)
	uses    []device.Stream // other streams recorded with RecordStream
	ch      *chunk          // caching strategy: the piece of a segment it holds
	freed   bool
}

// Held is the bytes the block holds: Size rounded up as the strategy
// rounds it. It is what Stats().Used counts for the block, and what its
// Piece of Segments covers.
func (b *Block) Held() uint64 { return b.rounded }

// New makes a pool drawing on src.
func New(src Source, cfg Config) (*Pool, error) {
	if src == nil {
		return nil, errors.New("the pool has no memory source")
	}
	name := cfg.Strategy
	if name == "" {
		name = StrategyCaching
	}
	if err := checkLimits(cfg.SoftLimit, cfg.HardLimit); err != nil {
		return nil, err
	}
	p := &Pool{name: name, soft: cfg.SoftLimit, pressure: cfg.Pressure}
	p.self = p
	c := &p.c
	c.src, c.hard = src, cfg.HardLimit
	c.peaks = []*accounting{&p.acct}
	if ev, ok := src.(EventSource); ok {
		c.events = ev
	}
	if s, ok := src.(DeviceSynchronizer); ok {
		c.syncer = s
	}
	switch name {
	case StrategyCaching:
		p.a = newCaching(c)
	case StrategyNone:
		p.a = newNone(c)
	case StrategyCUDA:
		as, ok := src.(AsyncSource)
		if !ok {
			return nil, errors.New(`pool strategy "cuda" needs the cuda backend (the driver's stream-ordered allocation)`)
		}
		p.a = newAsync(c, as)
	default:
		return nil, fmt.Errorf("unknown pool strategy %q (valid: %s)", cfg.Strategy, quoteAll(strategies))
	}
	if err := p.a.limitsChanged(p.soft, c.hard); err != nil {
		return nil, err
	}
	return p, nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// Strategy is the pool's strategy name: "caching", "none" or "cuda".
func (p *Pool) Strategy() string { return p.name }

var errClosed = errors.New("pool is closed")

// Alloc returns a block of at least nbytes for use on stream s. A request
// that does not fit climbs the ladder (cached block, release the cache and
// retry, Pressure and retry) before failing with an *OOMError. nbytes 0 is
// legal: the block holds no memory.
func (p *Pool) Alloc(nbytes uint64, s device.Stream) (*Block, error) {
	return alloc(p, &p.self, nbytes, s)
}

// AllocInto is Alloc into a Block the caller provides, so that a caller
// keeping the Block inside a structure of its own saves an allocation. b
// must be a zero Block; after a successful AllocInto it belongs to the pool
// until it is freed, and must not be reused.
func (p *Pool) AllocInto(b *Block, nbytes uint64, s device.Stream) error {
	return allocInto(p, &p.self, b, nbytes, s)
}

// alloc is Alloc from the layer at self, on pool p (its base, passed to
// save a call).
func alloc(p *Pool, self *layer, nbytes uint64, s device.Stream) (*Block, error) {
	b := new(Block)
	if err := allocInto(p, self, b, nbytes, s); err != nil {
		return nil, err
	}
	return b, nil
}

// allocInto is AllocInto from the layer at self, on pool p (its base).
func allocInto(p *Pool, self *layer, b *Block, nbytes uint64, s device.Stream) error {
	if b == nil || b.owner != nil {
		return errors.New("pool.AllocInto: the block must be a new, zero Block")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	l := *self
	if l.isClosed() {
		return errClosed
	}
	*b = Block{Size: nbytes, Stream: s, owner: self}
	if nbytes == 0 {
		l.countZero(b)
		return nil
	}
	if err := climb(l, b); err != nil {
		b.owner = nil // the caller may try again with it
		return err
	}
	return nil
}

// Free gives b's memory back to the pool. b may come from p or from any
// Quota on it; the layer that lent it is credited. Freeing a block twice,
// or after the pool closed, does nothing.
func (p *Pool) Free(b *Block) error {
	if b == nil {
		return errors.New("pool.Free: block is nil")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if b.owner == nil || (*b.owner).base() != p {
		return errors.New("pool.Free: block was not allocated by this pool")
	}
	if b.freed || p.closed {
		return nil
	}
	return (*b.owner).free(b)
}

// RecordStream notes that b was also used on stream s (PyTorch's
// recordStream): the memory is not reused for other work until s has
// finished what was queued on it before the block was freed.
func (p *Pool) RecordStream(b *Block, s device.Stream) {
	if b == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if b.freed || p.closed || b.owner == nil || (*b.owner).base() != p || s == b.Stream || b.Size == 0 {
		return
	}
	for _, u := range b.uses {
		if u == s {
			return
		}
	}
	b.uses = append(b.uses, s) // each strategy's free reads it
}

// Reclaim releases cached memory to the source, whole segments at a time,
// until at least nbytes went back; nbytes 0 releases all it can. Memory
// held by live blocks is never touched.
func (p *Pool) Reclaim(nbytes uint64) (released uint64, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, nil
	}
	return p.a.release(nbytes, true)
}

// Synchronized tells the pool that the caller reached a synchronisation
// point: work queued before it is done. Cached memory above the soft limit
// is released.
func (p *Pool) Synchronized() { p.synchronized(p) }

// synchronized is Synchronized for layer l, whose soft limits apply.
func (p *Pool) synchronized(l layer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.a.synchronized()
	_ = p.trimTo(l.softTarget()) // a failed release leaves memory cached; the next trim retries
}

// Close returns every byte the pool holds, live blocks included, to the
// source; blocks still held, by the pool or its quotas, become invalid and
// freeing them does nothing.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	return p.a.close()
}

// The pool as a layer: the bottom one, with its own limits and accounting.

func (p *Pool) base() *Pool          { return p }
func (p *Pool) isClosed() bool       { return p.closed }
func (p *Pool) pressureHook() func() { return p.pressure }
func (p *Pool) countZero(*Block)     { p.acct.zero() }
func (p *Pool) countRetry()          { p.acct.oomRetries++ }
func (p *Pool) softTarget() uint64   { return p.soft }

func (p *Pool) try(b *Block) (bool, error) {
	hit, err := p.a.alloc(b)
	if err != nil {
		if isOOM(err) {
			return false, err
		}
		return false, fmt.Errorf("allocating %s: %w", formatBytes(b.Size), err)
	}
	p.acct.alloc(b, hit)
	return hit, nil
}

func (p *Pool) oom(nbytes uint64, _ error) error {
	e := p.oomError(nbytes, p.c.hard, &p.acct)
	p.noteFragmentation(e)
	return e
}

func (p *Pool) free(b *Block) error {
	err := p.freeBlock(b)
	if terr := p.trimTo(p.soft); err == nil {
		err = terr
	}
	return err
}

// freeBlock takes b's memory back and counts the free in the pool's own
// figures; trimming the cache is the caller's.
func (p *Pool) freeBlock(b *Block) error {
	b.freed = true
	p.acct.free(b)
	if b.Size == 0 {
		return nil
	}
	return p.a.free(b)
}

// sourceAlloc draws nbytes from the source, keeping reserved memory under
// the hard limit.
func (c *core) sourceAlloc(nbytes uint64) (device.Ptr, error) {
	if h := c.hard; h > 0 && (nbytes > h || c.reserved > h-nbytes) {
		return 0, errOverLimit
	}
	ptr, err := c.src.Alloc(nbytes)
	if err != nil {
		return 0, err
	}
	c.reserve(nbytes)
	return ptr, nil
}

// sourceFree returns nbytes at ptr to the source.
func (c *core) sourceFree(ptr device.Ptr, nbytes uint64) error {
	c.unreserve(nbytes)
	return c.src.Free(ptr, nbytes)
}

func (c *core) reserve(nbytes uint64) {
	c.reserved += nbytes
	for _, a := range c.peaks {
		a.peakReserved = max(a.peakReserved, c.reserved)
	}
}

func (c *core) unreserve(nbytes uint64) {
	c.reserved -= nbytes
}
