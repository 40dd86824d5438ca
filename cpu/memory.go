package cpu

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/dustin/go-humanize"

	"github.com/gluaproject/glua/device"
)

const (
	// addressBase is where the fake address space starts: far from 0, so
	// that a zero or small Ptr is never mistaken for a live address.
	addressBase device.Ptr = 1 << 40
	// alignment matches cuMemAlloc's guarantee, which the runtime relies on
	// when it carves views and casts them to typed slices.
	alignment = 256
	// mappedMin is the size from which an allocation is mapped from the
	// operating system rather than taken from the Go heap (mapBytes). The
	// pool asks for segments of 256 KiB and more; smaller requests (the
	// "none" strategy's) are not worth a system call and a page each.
	mappedMin = 64 << 10
)

// allocation is one Alloc: a Go buffer standing at [base, base+size) in the
// fake address space.
type allocation struct {
	base   device.Ptr
	size   uint64
	data   []byte
	mapped bool // data comes from mapBytes and goes back with unmapBytes
}

func (a *allocation) String() string {
	return fmt.Sprintf("%s at %#x", humanize.IBytes(a.size), uint64(a.base))
}

// Alloc returns nbytes of zeroed memory at a 256-byte aligned address.
func (b *Backend) Alloc(nbytes uint64) (device.Ptr, error) {
	if nbytes == 0 {
		// cuMemAlloc rejects 0 too; accepting it here would let code that
		// only ever runs on the CPU in tests fail on a GPU.
		return 0, fmt.Errorf("alloc: size must be positive, got 0 bytes")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, fmt.Errorf("alloc: %w", errClosed)
	}
	free := b.capacity - b.allocated
	if nbytes > free {
		return 0, fmt.Errorf("alloc: cannot allocate %s: %w (%s free of %s)",
			humanize.IBytes(nbytes), device.ErrOutOfMemory, humanize.IBytes(free), humanize.IBytes(b.capacity))
	}
	span := (nbytes + alignment - 1) &^ (alignment - 1)
	if uint64(b.next) > math.MaxUint64-span || nbytes > math.MaxInt {
		return 0, fmt.Errorf("alloc: cannot allocate %s: address space exhausted", humanize.IBytes(nbytes))
	}
	a := &allocation{base: b.next, size: nbytes}
	if nbytes >= mappedMin {
		data, err := mapBytes(nbytes)
		if err != nil {
			return 0, fmt.Errorf("alloc: cannot allocate %s: %w (mmap: %v)", humanize.IBytes(nbytes), device.ErrOutOfMemory, err)
		}
		a.data, a.mapped = data, true
	} else {
		a.data = alignedBytes(nbytes)
	}
	b.live.ReplaceOrInsert(a)
	b.next += device.Ptr(span)
	b.allocated += nbytes
	return a.base, nil
}

// alignedBytes returns n zeroed bytes whose first byte is 8-byte aligned, so
// that element-aligned views of them can be read as []float64 or []int64.
// A []byte from make has no such guarantee for small sizes.
func alignedBytes(n uint64) []byte {
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

// Free releases an allocation. p must be the address Alloc returned and
// nbytes the size asked for: a mismatch is a caller's bookkeeping bug, and is
// reported rather than guessed around.
func (b *Backend) Free(p device.Ptr, nbytes uint64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("free: %w", errClosed)
	}
	a, ok := b.live.Get(&allocation{base: p})
	if !ok {
		if c := b.containing(p); c != nil {
			return fmt.Errorf("free: %#x is inside the allocation of %s, not its start", uint64(p), c)
		}
		return fmt.Errorf("free: %#x is not a live allocation", uint64(p))
	}
	if a.size != nbytes {
		return fmt.Errorf("free: %#x was allocated with %d bytes, not %d", uint64(p), a.size, nbytes)
	}
	b.live.Delete(a)
	b.allocated -= a.size
	b.forget(a)
	return a.release()
}

// release gives a mapped allocation's memory back to the system.
func (a *allocation) release() error {
	if !a.mapped {
		return nil
	}
	a.mapped = false
	if err := unmapBytes(a.data); err != nil {
		return fmt.Errorf("free: unmapping %s: %w", a, err)
	}
	return nil
}

// Bytes is the host view of nbytes at p, or nil when [p, p+nbytes) is not
// inside one live allocation. The view is valid until p is freed: large
// allocations are unmapped then, and touching them faults.
func (b *Backend) Bytes(p device.Ptr, nbytes uint64) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, _ := b.view(p, nbytes)
	return v
}

// containing returns the live allocation whose range holds p, or nil.
// b.mu must be held.
func (b *Backend) containing(p device.Ptr) *allocation {
	var found *allocation
	b.live.DescendLessOrEqual(&allocation{base: p}, func(a *allocation) bool {
		found = a
		return false
	})
	if found == nil || uint64(p-found.base) >= found.size {
		return nil
	}
	return found
}

// view returns the bytes [p, p+nbytes) of the live allocation holding them.
// An empty view may sit at the very end of an allocation, as an empty slice
// of an array does. b.mu must be held.
func (b *Backend) view(p device.Ptr, nbytes uint64) ([]byte, bool) {
	var a *allocation
	b.live.DescendLessOrEqual(&allocation{base: p}, func(x *allocation) bool {
		a = x
		return false
	})
	if a == nil {
		return nil, false
	}
	off := uint64(p - a.base)
	if off > a.size || nbytes > a.size-off {
		return nil, false
	}
	return a.data[off : off+nbytes : off+nbytes], true
}

// region finds [p, p+nbytes) for the call named op, or says why it cannot.
func (b *Backend) region(op, what string, p device.Ptr, nbytes uint64) ([]byte, error) {
	if b.closed {
		return nil, fmt.Errorf("%s: %w", op, errClosed)
	}
	if v, ok := b.view(p, nbytes); ok {
		return v, nil
	}
	if a := b.containing(p); a != nil {
		return nil, fmt.Errorf("%s: %s of %d bytes at %#x runs past the end of its allocation (%s)",
			op, what, nbytes, uint64(p), a)
	}
	return nil, fmt.Errorf("%s: %s at %#x is not inside a live allocation", op, what, uint64(p))
}
