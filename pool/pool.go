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
	// the source); it is checked before every allocation. On a quota view
	// (Quota) it caps the bytes the view's live blocks hold.
	HardLimit uint64
	// Pressure is the ladder's third rung: the caller runs Go's GC and
	// frees, through Free, the blocks its cleanups queued. It is called
	// without the pool's lock held, so it may call Free; it must not
	// allocate from the pool, or the ladder would recurse. May be nil.
	Pressure func()
}

// Pool hands out device memory in Blocks. All its methods are safe for
// concurrent use; several runtimes may share one Pool, or each hold a quota
// view of one (Quota).
type Pool struct {
	c *core

	// Guarded by c.mu.
	soft, hard uint64
	pressure   func()
	acct       accounting
	// live is kept only for quota views, so that closing a view can free
	// what it still holds; the root's Close returns whole segments instead.
	live   map[*Block]struct{}
	closed bool
}

// core is what a pool and its quota views share: one lock, one source, one
// allocator and one count of reserved memory.
type core struct {
	mu       sync.Mutex
	src      Source
	events   EventSource        // nil for a synchronous source
	syncer   DeviceSynchronizer // nil when the source cannot wait for the device
	strategy string
	a        allocator
	root     *Pool
	views    []*Pool

	reserved uint64
	reclaims uint64 // segments (or driver trims) returned to the source
	closed   bool
}

// allocator is one strategy. Every method is called with core.mu held.
type allocator interface {
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
	// limitsChanged is told the root's new limits.
	limitsChanged(soft, hard uint64) error
	// describe fills the strategy's part of Stats (Segments,
	// LargestFreeBlock), after bringing reserved up to date if the
	// strategy cannot know it otherwise.
	describe(st *Stats)
	// close returns every byte, live or cached, to the source.
	close() error
}

// Block is one allocation. Ptr, Size and Stream are read-only for callers.
type Block struct {
	Ptr device.Ptr
	// Size is the number of bytes asked for; the block may hold more.
	Size uint64
	// Stream is the stream the block was allocated for.
	Stream device.Stream

	owner   *Pool
	rounded uint64          // bytes the block holds (counted in Used)
	uses    []device.Stream // other streams recorded with RecordStream
	ch      *chunk          // caching strategy: the piece of a segment it holds
	freed   bool
}

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
	c := &core{src: src, strategy: name}
	if ev, ok := src.(EventSource); ok {
		c.events = ev
	}
	if s, ok := src.(DeviceSynchronizer); ok {
		c.syncer = s
	}
	switch name {
	case StrategyCaching:
		c.a = newCaching(c)
	case StrategyNone:
		c.a = newNone(c)
	case StrategyCUDA:
		as, ok := src.(AsyncSource)
		if !ok {
			return nil, errors.New(`pool strategy "cuda" needs the cuda backend (the driver's stream-ordered allocation)`)
		}
		c.a = newAsync(c, as)
	default:
		return nil, fmt.Errorf("unknown pool strategy %q (valid: %s)", cfg.Strategy, quoteAll(strategies))
	}
	p := &Pool{c: c, soft: cfg.SoftLimit, hard: cfg.HardLimit, pressure: cfg.Pressure}
	c.root = p
	c.views = []*Pool{p}
	if err := c.a.limitsChanged(p.soft, p.hard); err != nil {
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
func (p *Pool) Strategy() string { return p.c.strategy }

var errClosed = errors.New("pool is closed")

// Alloc returns a block of at least nbytes for use on stream s. A request
// that does not fit climbs the ladder (cached block, release the cache and
// retry, Pressure and retry) before failing with an *OOMError. nbytes 0 is
// legal: the block holds no memory.
func (p *Pool) Alloc(nbytes uint64, s device.Stream) (*Block, error) {
	b := new(Block)
	if err := p.AllocInto(b, nbytes, s); err != nil {
		return nil, err
	}
	return b, nil
}

// AllocInto is Alloc into a Block the caller provides, so that a caller
// keeping the Block inside a structure of its own saves an allocation. b
// must be a zero Block; after a successful AllocInto it belongs to the pool
// until it is freed, and must not be reused.
func (p *Pool) AllocInto(b *Block, nbytes uint64, s device.Stream) error {
	if b == nil || b.owner != nil {
		return errors.New("pool.AllocInto: the block must be a new, zero Block")
	}
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || p.closed {
		return errClosed
	}
	*b = Block{Size: nbytes, Stream: s, owner: p}
	if nbytes == 0 {
		p.countZero(b)
		return nil
	}
	if err := p.climb(b); err != nil {
		b.owner = nil // the caller may try again with it
		return err
	}
	return nil
}

// Free gives b's memory back to the pool. b may come from p or from any
// quota view of the same pool; its own view is credited. Freeing a block
// twice, or after the pool closed, does nothing.
func (p *Pool) Free(b *Block) error {
	if b == nil {
		return errors.New("pool.Free: block is nil")
	}
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if b.owner == nil || b.owner.c != c {
		return errors.New("pool.Free: block was not allocated by this pool")
	}
	if b.freed || c.closed {
		return nil
	}
	return b.owner.freeLocked(b)
}

// freeLocked frees b, which p owns, and trims the cache to the soft limits.
func (p *Pool) freeLocked(b *Block) error {
	c := p.c
	b.freed = true
	p.countFree(b)
	var err error
	if b.Size > 0 {
		err = c.a.free(b)
	}
	if terr := p.trimToSoft(); err == nil {
		err = terr
	}
	if err != nil {
		return err
	}
	return nil
}

// RecordStream notes that b was also used on stream s (PyTorch's
// recordStream): the memory is not reused for other work until s has
// finished what was queued on it before the block was freed.
func (p *Pool) RecordStream(b *Block, s device.Stream) {
	if b == nil {
		return
	}
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if b.freed || c.closed || b.owner == nil || b.owner.c != c || s == b.Stream || b.Size == 0 {
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
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, nil
	}
	released, err = c.a.release(nbytes, true)
	if err != nil {
		return released, err
	}
	return released, nil
}

// Synchronized tells the pool that the caller reached a synchronisation
// point: work queued before it is done. Cached memory above the soft limit
// is released.
func (p *Pool) Synchronized() {
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.a.synchronized()
	_ = p.trimToSoft() // a failed release leaves memory cached; the next trim retries
}

// Close returns every byte the pool holds, live blocks included, to the
// source; blocks still held become invalid and freeing them does nothing.
// Closing a quota view frees the view's live blocks into the shared pool.
func (p *Pool) Close() error {
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || p.closed {
		return nil
	}
	if p != c.root {
		return p.closeView()
	}
	c.closed = true
	if err := c.a.close(); err != nil {
		return err
	}
	return nil
}

// sourceAlloc draws nbytes from the source, keeping reserved memory under
// the hard limit.
func (c *core) sourceAlloc(nbytes uint64) (device.Ptr, error) {
	if h := c.root.hard; h > 0 && (nbytes > h || c.reserved > h-nbytes) {
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
	for _, v := range c.views {
		v.acct.peakReserved = max(v.acct.peakReserved, c.reserved)
	}
}

func (c *core) unreserve(nbytes uint64) {
	c.reserved -= nbytes
}
