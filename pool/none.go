package pool

import (
	"errors"
	"math"
)

// noneAlloc is strategy "none": every allocation and free goes straight to
// the source. Nothing is cached, so the source sees exactly what the
// program does; limits, the ladder (minus its cache rung) and accounting
// work as for the caching strategy.
type noneAlloc struct {
	c *core
	// live lets Close return what blocks still hold.
	live map[*Block]struct{}
}

func newNone(c *core) *noneAlloc {
	return &noneAlloc{c: c, live: make(map[*Block]struct{})}
}

// round keeps the size asked for: the source does its own rounding, and
// Used should match what the source was asked for.
func (n *noneAlloc) round(nbytes uint64) (uint64, bool) {
	return nbytes, nbytes < math.MaxUint64/2
}

func (n *noneAlloc) alloc(b *Block) (bool, error) {
	ptr, err := n.c.sourceAlloc(b.rounded)
	if err != nil {
		return false, err
	}
	b.Ptr = ptr
	n.live[b] = struct{}{}
	return false, nil
}

// free returns the memory at once. The source's Free is trusted to wait
// for queued work that may still use it (cuMemFree synchronises).
func (n *noneAlloc) free(b *Block) error {
	delete(n.live, b)
	return n.c.sourceFree(b.Ptr, b.rounded)
}

func (n *noneAlloc) release(uint64, bool) (uint64, error)  { return 0, nil }
func (n *noneAlloc) synchronized()                         {}
func (n *noneAlloc) limitsChanged(soft, hard uint64) error { return nil }
func (n *noneAlloc) describe(st *Stats)                    { st.Segments = len(n.live) }

func (n *noneAlloc) close() error {
	var errs []error
	for b := range n.live {
		if err := n.c.sourceFree(b.Ptr, b.rounded); err != nil {
			errs = append(errs, err)
		}
		b.freed = true
	}
	clear(n.live)
	return errors.Join(errs...)
}
