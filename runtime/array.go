package runtime

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync/atomic"

	"github.com/gluaproject/glua/arraytext"
	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/pool"
)

// DType and its values are re-exported so Go users need import only runtime.
type DType = device.DType

const (
	Float32  = device.Float32
	Float64  = device.Float64
	Float16  = device.Float16
	BFloat16 = device.BFloat16
	Int32    = device.Int32
	Int64    = device.Int64
	Uint8    = device.Uint8
)

// ErrFreed is returned by every operation on an array whose memory was
// released (by Free, a scope's end or Runtime.Close).
var ErrFreed = errors.New("use of freed array")

// buffer is one pool block and the arrays that view it. It is freed once:
// explicitly, by a scope, at Close, or when the last Array over it becomes
// unreachable and its cleanup has been drained.
type buffer struct {
	rt    *Runtime
	dtype device.DType
	shape []int // of the array that allocated it, for snapshots
	site  site
	// blk and dims hold the pool block and (up to four dimensions of) the
	// shape in the buffer itself: two allocations fewer for every array.
	blk   pool.Block
	dims  [4]int
	id    uint64
	freed bool
	// graphs counts the graphs whose recorded work uses the buffer; while
	// any does, a free leaves the memory to them (orphan) instead of the
	// pool (graph.go). Guarded by the runtime's mu.
	graphs int32
	orphan bool
	// script is set while the array that allocated it belongs to the
	// script (Runtime.GiveToScript); mark is the last walk that reached one of its
	// arrays, swept says a walk freed it (sweep.go).
	script, swept bool
	mark          uint32
	// arrays counts the Array values over this buffer that the garbage
	// collector has not yet found unreachable. Decremented by cleanups on the
	// GC's goroutine, hence atomic.
	arrays atomic.Int64
	// prev and next link the runtime's live buffers (bufferList).
	prev, next *buffer
}

// Array is an n-dimensional array in device memory, row-major. Several
// Arrays may view one buffer (reshape, rows); only the one that allocated it
// may free it.
type Array struct {
	buf    *buffer
	offset uint64 // bytes into the buffer
	shape  []int
	dtype  device.DType
	size   int
	view   bool
	// cleanup tells the runtime when the GC finds the array unreachable.
	cleanup goruntime.Cleanup
}

// youngMax and youngMaxBytes bound the arrays waiting for their GC
// cleanup. Most arrays in a loop are freed soon after they are made;
// registering a cleanup for each and cancelling it at the free was a third
// of an alloc+free from Lua. But a young array the script dropped cannot be
// collected, so its memory stays held until graduation: the byte bound
// keeps that small, and large arrays, for which a cleanup costs little
// next to the allocation, graduate at once.
const (
	youngMax      = 64
	youngMaxBytes = 16 << 20
)

func newArray(buf *buffer, offset uint64, shape []int, dt device.DType, view bool) *Array {
	a := &Array{buf: buf, offset: offset, shape: shape, dtype: dt, size: product(shape), view: view}
	buf.arrays.Add(1)
	rt := buf.rt
	if rt.mem.youngFull() {
		// Before a joins: the newest array is the likeliest to be freed
		// soon, and graduating it would give it a cleanup for nothing.
		rt.graduate()
	}
	var nbytes uint64
	if !view {
		nbytes = buf.blk.Size
	}
	rt.mem.addYoung(a, nbytes)
	return a
}

// graduate gives each young array whose memory is still held its GC
// cleanup, and lets go of them all: until then the young list keeps them
// reachable, so that an array dropped by Lua is found by the collector
// only after graduation. collect graduates before it collects, so the
// OOM ladder and collectgarbage see every dropped array.
func (rt *Runtime) graduate() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.mem.takeYoung(func(a *Array) {
		if a.buf.freed {
			// Freed already: nothing for a cleanup to do, and the count
			// of arrays over the buffer no longer matters.
			a.buf.arrays.Add(-1)
			return
		}
		a.cleanup = goruntime.AddCleanup(a, func(b *buffer) { b.rt.unreachable(b) }, a.buf)
	})
}

// Shape returns a copy of the array's shape.
func (a *Array) Shape() []int { return append([]int(nil), a.shape...) }

// DType is the element type.
func (a *Array) DType() device.DType { return a.dtype }

// Dim is the size of dimension i (0-based), without copying the shape.
func (a *Array) Dim(i int) int { return a.shape[i] }

// Size is the number of elements.
func (a *Array) Size() int { return a.size }

// NBytes is the size of the array's data in bytes.
func (a *Array) NBytes() uint64 { return uint64(a.size) * uint64(a.dtype.Size()) }

// NDim is the number of dimensions.
func (a *Array) NDim() int { return len(a.shape) }

// IsView reports whether the array shares memory allocated by another.
func (a *Array) IsView() bool { return a.view }

// IsFreed reports whether the array's memory has been released.
func (a *Array) IsFreed() bool {
	if a == nil || a.buf == nil {
		return false
	}
	a.buf.rt.mu.Lock()
	defer a.buf.rt.mu.Unlock()
	return a.buf.freed
}

// Runtime is the runtime the array belongs to; nil for a zero Array, which
// no runtime made.
func (a *Array) Runtime() *Runtime {
	if a == nil || a.buf == nil {
		return nil
	}
	return a.buf.rt
}

// ptr is the array's device address; callers check liveness first.
func (a *Array) ptr() device.Ptr { return a.buf.blk.Ptr + device.Ptr(a.offset) }

// String reads like DeviceArray<float32>[1024x1024] 4.0 MiB.
func (a *Array) String() string {
	s := fmt.Sprintf("DeviceArray<%s>[%s] %s", a.dtype, shapeString(a.shape), config.FormatSize(a.NBytes()))
	if a.IsFreed() {
		s += " (freed)"
	}
	return s
}

// Repr is String followed, on the lines below, by the array's elements
// as package arraytext writes them (NumPy's repr). Of an array past
// arraytext.Threshold elements it downloads only those shown, the first
// and last few of each dimension. A freed array shows no elements.
func (a *Array) Repr() (string, error) {
	head := a.String()
	if a.IsFreed() {
		return head, nil
	}
	if err := a.live(a.Runtime(), ""); err != nil {
		return "", err
	}
	text, err := arraytext.Format(a.shape, a.dtype, a.download)
	if err != nil {
		return "", err
	}
	return head + "\n" + text, nil
}

// download copies count elements of the array, from flat element start,
// into dst; callers check liveness first.
func (a *Array) download(dst []byte, start, count int) error {
	if count == 0 {
		return nil
	}
	rt := a.buf.rt
	if err := rt.uncapturable("a copy to the host"); err != nil {
		return err
	}
	return rt.backend.Download(dst[:count*a.dtype.Size()], a.ptr()+device.Ptr(start*a.dtype.Size()), rt.streams.own)
}

// Free releases the array's memory to the pool now. A second Free is
// harmless. Freeing a view is an error: its memory belongs to the array it
// views.
func (a *Array) Free() error {
	if err := unmade("Free", a); err != nil {
		return err
	}
	if a.view {
		return errors.New("cannot free a view; free the array it views")
	}
	err := a.buf.rt.freeExplicitly(a.buf)
	// The buffer is freed, so a cleanup (if the array has one yet) has
	// nothing left to do; dropping it keeps the collector's list short.
	a.cleanup.Stop()
	return err
}

// live checks that the array may be used by rt.
func (a *Array) live(rt *Runtime, name string) error {
	if a == nil {
		return fmt.Errorf("%s is nil", name)
	}
	if a.buf == nil {
		if name == "" {
			name = "the Array"
		}
		return fmt.Errorf("%s was not made by a runtime (a zero Array)", name)
	}
	if a.buf.rt != rt {
		return fmt.Errorf("%s belongs to another runtime", name)
	}
	if err := rt.usable(); err != nil {
		return err
	}
	if a.IsFreed() {
		err := ErrFreed
		if a.buf.swept {
			err = errSwept
		}
		if name == "" {
			return err
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	if c := rt.graphs.capture; c != nil {
		c.hold(rt, a.buf)
	}
	return nil
}

// errSwept is ErrFreed for an array glua freed because no Lua value
// referred to it: Go code kept it without Keep.
var errSwept = fmt.Errorf("%w (glua freed it when no Lua value referred to it any more; Go code that keeps an array a script made calls Runtime.Keep)", ErrFreed)

// bufferList is a doubly linked list of buffers; its owner's lock guards it.
type bufferList struct {
	head  *buffer
	n     int
	bytes uint64 // the blocks' sizes: what pacing needs without asking the pool
}

func (l *bufferList) push(b *buffer) {
	b.prev, b.next = nil, l.head
	if l.head != nil {
		l.head.prev = b
	}
	l.head = b
	l.n++
	l.bytes += b.blk.Size
}

func (l *bufferList) remove(b *buffer) {
	if b.prev != nil {
		b.prev.next = b.next
	} else {
		l.head = b.next
	}
	if b.next != nil {
		b.next.prev = b.prev
	}
	b.prev, b.next = nil, nil
	l.n--
	l.bytes -= b.blk.Size
}

func (l *bufferList) all() []*buffer {
	out := make([]*buffer, 0, l.n)
	for b := l.head; b != nil; b = b.next {
		out = append(out, b)
	}
	return out
}

func product(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// FormatShape writes a shape as glua's messages do: 1024x1024.
func FormatShape(shape []int) string { return shapeString(shape) }

func shapeString(shape []int) string {
	if len(shape) == 0 {
		return ""
	}
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = fmt.Sprint(d)
	}
	return strings.Join(parts, "x")
}

// checkShape validates a shape given by a user: at least one dimension, each
// non-negative, and a total size that fits in memory arithmetic.
func checkShape(shape []int) error {
	if len(shape) == 0 {
		return errors.New("shape must have at least one dimension")
	}
	if err := device.CheckDims(len(shape)); err != nil {
		return err
	}
	n := uint64(1)
	for i, d := range shape {
		if d < 0 {
			return fmt.Errorf("shape[%d] is %d; dimensions cannot be negative", i+1, d)
		}
		var ok bool
		if n, ok = mulElements(n, uint64(d)); !ok {
			return fmt.Errorf("shape %s is too large", shapeString(shape))
		}
	}
	return nil
}

// mulElements is n·d elements, or false where that passes 2^50, more than
// any memory holds, before the product could wrap (2^32 × 2^32 would be
// 0 elements in an int).
func mulElements(n, d uint64) (uint64, bool) {
	if d != 0 && n > (1<<50)/d {
		return 0, false
	}
	return n * d, true
}
