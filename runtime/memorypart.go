package runtime

import (
	"slices"
	"sync/atomic"

	"github.com/gluaproject/glua/pool"
)

// memoryPart is the runtime's own account of device memory: the buffers
// of live arrays, those Go's collector found unreachable, the scopes that
// free what was allocated in them, the cuBLAS workspaces, the young arrays
// still without a GC cleanup, and the pacing of the collections the
// runtime starts (gcPacer). The runtime allocates, frees, drains and
// collects through it in allocation.go and collection.go.
//
// buffers, pending, nextID, scopes and workspaces are guarded by the
// Runtime's mu, which the callers of the methods that read or change them
// hold; mu stays on the Runtime because it also guards the graphs' live
// list, the transfers' pinned map and stagers, and each buffer's freed.
// queued is read without the lock. young, youngBytes and the pacer are
// touched only by the runtime's goroutine.
type memoryPart struct {
	// buffers lists the buffers allocated and not yet freed, newest first,
	// linked through the buffers themselves: a map cost a hash insert and
	// delete on every allocation.
	buffers bufferList
	pending []*buffer // found unreachable by GC cleanups; freed by drain
	// queued is set when pending, the graphs' or the pinned queue gains
	// an entry, so that drain, called on every allocation, takes no lock
	// when there is nothing to free.
	queued atomic.Bool
	nextID uint64
	scopes []*scope
	// workspaces are the live cuBLAS workspaces of the runtime's streams
	// (workspaces.go).
	workspaces []*pool.Block
	// young are the arrays made since the last graduate, still without a
	// GC cleanup (see newArray); youngBytes is what they allocated.
	young      []*Array
	youngBytes uint64

	pacer gcPacer
}

// add numbers b and lists it among the live buffers and in the innermost
// scope. The caller holds mu.
func (m *memoryPart) add(b *buffer) {
	m.nextID++
	b.id = m.nextID
	m.buffers.push(b)
	if n := len(m.scopes); n > 0 {
		m.scopes[n-1].buffers = append(m.scopes[n-1].buffers, b)
	}
}

// remove takes b off the live buffers. The caller holds mu.
func (m *memoryPart) remove(b *buffer) { m.buffers.remove(b) }

// queue keeps b, found unreachable, for drain to free. The caller holds mu.
func (m *memoryPart) queue(b *buffer) {
	m.pending = append(m.pending, b)
	m.wake()
}

// wake tells drain that something is queued, here or in another part.
func (m *memoryPart) wake() { m.queued.Store(true) }

// hasQueued reports, without the lock, whether anything was queued since
// the last takePending.
func (m *memoryPart) hasQueued() bool { return m.queued.Load() }

// takePending hands over the buffers queued for drain. The caller holds
// mu, and takes the other parts' queues under the same hold.
func (m *memoryPart) takePending() []*buffer {
	m.queued.Store(false)
	p := m.pending
	m.pending = nil
	return p
}

// takeAll empties the part at Close and hands over the buffers still
// live, which Close frees. The caller holds mu.
func (m *memoryPart) takeAll() []*buffer {
	live := m.buffers.all()
	m.buffers = bufferList{}
	m.pending = nil
	clear(m.young)
	m.young = nil
	return live
}

// pushScope makes s the innermost scope; popScope ends it. The caller
// holds mu.
func (m *memoryPart) pushScope(s *scope) { m.scopes = append(m.scopes, s) }

func (m *memoryPart) popScope() { m.scopes = m.scopes[:len(m.scopes)-1] }

// passToScope gives kept buffers to the innermost scope, if any. The
// caller holds mu.
func (m *memoryPart) passToScope(kept []*buffer) {
	if n := len(m.scopes); n > 0 {
		m.scopes[n-1].buffers = append(m.scopes[n-1].buffers, kept...)
	}
}

// addWorkspace and dropWorkspace keep the list of live workspaces;
// workspaceBytes is their number and size. The caller holds mu.
func (m *memoryPart) addWorkspace(blk *pool.Block) { m.workspaces = append(m.workspaces, blk) }

func (m *memoryPart) dropWorkspace(blk *pool.Block) {
	if i := slices.Index(m.workspaces, blk); i >= 0 {
		m.workspaces = slices.Delete(m.workspaces, i, i+1)
	}
}

func (m *memoryPart) workspaceBytes() (n int, bytes uint64) {
	for _, blk := range m.workspaces {
		bytes += blk.Size
	}
	return len(m.workspaces), bytes
}

// youngFull reports whether the young arrays reached their bounds
// (youngMax, youngMaxBytes), so that they graduate before another joins.
func (m *memoryPart) youngFull() bool {
	return len(m.young) >= youngMax || m.youngBytes >= youngMaxBytes
}

// addYoung adds a to the young arrays; nbytes is what it allocated (0 for
// a view).
func (m *memoryPart) addYoung(a *Array, nbytes uint64) {
	m.young = append(m.young, a)
	m.youngBytes += nbytes
}

// takeYoung hands each young array to fn and forgets them all, keeping
// the list's storage for the next.
func (m *memoryPart) takeYoung(fn func(*Array)) {
	for i, a := range m.young {
		m.young[i] = nil
		fn(a)
	}
	m.young, m.youngBytes = m.young[:0], 0
}
