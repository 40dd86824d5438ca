package npy

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"unsafe"
)

// A mapped file's page that cannot be had faults (SIGBUS) when touched:
// the file was truncated under the mapping by another program, or a hole
// in it could not be filled because its file system is full. Go kills the
// process for such a fault unless the goroutine that touched the page
// asked to panic instead (debug.SetPanicOnFault). Access asks, and turns
// the panic into an error naming the file, which it finds by the faulting
// address among the mappings live in the process.

// live is every mapping of this process, by address: the address space is
// the process's, whichever runtime mapped the file.
var live struct {
	sync.Mutex
	spans []span // sorted by start
}

type span struct {
	start, end uintptr
	path       string
}

// track adds a mapping's bytes to live.
func track(whole []byte, path string) {
	if len(whole) == 0 {
		return
	}
	s := span{start: uintptr(unsafe.Pointer(unsafe.SliceData(whole))), path: path}
	s.end = s.start + uintptr(len(whole))
	live.Lock()
	i := sort.Search(len(live.spans), func(i int) bool { return live.spans[i].start >= s.start })
	live.spans = append(live.spans, span{})
	copy(live.spans[i+1:], live.spans[i:])
	live.spans[i] = s
	live.Unlock()
}

// untrack removes the mapping that starts at whole's first byte.
func untrack(whole []byte) {
	if len(whole) == 0 {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(whole)))
	live.Lock()
	defer live.Unlock()
	i := sort.Search(len(live.spans), func(i int) bool { return live.spans[i].start >= start })
	if i < len(live.spans) && live.spans[i].start == start {
		live.spans = append(live.spans[:i], live.spans[i+1:]...)
	}
}

// mappedAt is the span holding addr.
func mappedAt(addr uintptr) (span, bool) {
	live.Lock()
	defer live.Unlock()
	i := sort.Search(len(live.spans), func(i int) bool { return live.spans[i].end > addr })
	if i < len(live.spans) && live.spans[i].start <= addr {
		return live.spans[i], true
	}
	return span{}, false
}

// FaultError is a fault on a mapped file's bytes, turned into an error by
// Access.
type FaultError struct {
	Path   string
	Offset int64 // from the start of the file; -1 where the system did not say
}

func (e *FaultError) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("%s: the memory-mapped file could not be read: it was truncated by another program", e.Path)
	}
	return fmt.Sprintf("%s: the memory-mapped file could not be read or written at byte %d: it was truncated by another program, or its file system is full", e.Path, e.Offset)
}

// Access runs fn, which may read or write the bytes of mapped files, on
// the calling goroutine, and returns a *FaultError where a page of one
// could not be had; the process goes on as if fn had returned there. A
// fault outside every mapping is a bug of the caller's and panics on. fn
// must leave nothing half done that matters when it stops part way (a
// copy stops with some bytes copied). Goroutines that fn starts must call
// Access themselves: a fault is heard by the goroutine that touched the
// page only.
func Access(fn func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if f, ok := r.(interface{ Addr() uintptr }); ok {
			if _, isRuntime := r.(runtime.Error); isRuntime {
				if s, ok := mappedAt(f.Addr()); ok {
					err = &FaultError{Path: s.path, Offset: int64(f.Addr() - s.start)}
					return
				}
			}
		}
		panic(r)
	}()
	fn()
	return nil
}
