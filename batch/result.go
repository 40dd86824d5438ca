package batch

import (
	goruntime "runtime"
	"sync"
	"sync/atomic"

	"github.com/gluaproject/glua/internal/prefault"
	"github.com/gluaproject/glua/runtime"
)

// Where the product lands when no out is given: a new result array,
// allocated and paged in beside the first tiles.

// sink is where C's tiles land: array waits for the array, and landed
// tells it that the tiles of the band of rows from r on are in it;
// result says that the array is a new result array (allocate), which is
// never pinned or page-locked.
type sink struct {
	array  func() (*runtime.HostArray, error)
	landed func(r int)
	result bool
}

// allocate starts allocating the product's array, and returns its sink
// and a function that stops the work on it and waits for that. The tiles
// write every byte, so the array is a result array (NewResultArray): the
// memory of a dropped product or download reused as it is. Go would zero
// memory it reused, on the thread asking for it: 16384² float32 ran at
// 0.71 of in core when Go gave fresh memory for C and at 0.48 when it
// zeroed a gigabyte first, alternating from call to call with the
// collector's cycles, on the H100's host. Fresh memory has no pages yet (a
// reused mapping has them, and asking is then cheap), and a tile
// scattered into it faulted them in on the scatter's path, at a quarter of
// a copy's speed and on every processor, so the pages are asked for ahead:
// the first band of rows (rows long) at once, each later one once the
// band before it has landed, so that the kernel's work is spread over the
// product instead of crowding its first row of tiles.
func allocate(rt *runtime.Runtime, shape []int, dt runtime.DType, rows int) (sink, func()) {
	type result struct {
		h   *runtime.HostArray
		err error
	}
	made := make(chan result, 1)
	next := make(chan int, ceilDiv(shape[0], rows)+1)
	finished := make(chan struct{})
	var stopping atomic.Bool
	go func() {
		defer close(finished)
		h, err := rt.NewResultArray(shape, dt)
		made <- result{h, err}
		if err != nil {
			return
		}
		b, m := h.Bytes(), shape[0]
		band := func(r int) bool {
			if len(b) < prefaultMin || r >= m || stopping.Load() {
				return true
			}
			row := len(b) / m
			// A kernel that will not leaves the faults to the scatters.
			return prefault.Pages(b[r*row:min(r+rows, m)*row], prefaultThreads, &stopping) == nil
		}
		ok := band(0)
		for r := range next {
			ok = ok && band(r)
		}
		goruntime.KeepAlive(h)
	}()
	array := sync.OnceValues(func() (*runtime.HostArray, error) {
		r := <-made
		return r.h, r.err
	})
	landed := func(r int) {
		select {
		case next <- r + rows:
		default: // full only if told of a band twice; the pages are asked for already
		}
	}
	return sink{array: array, landed: landed, result: true}, func() {
		stopping.Store(true)
		close(next)
		<-finished
	}
}

// prefaultThreads are the threads that ask for C's pages, beside the
// gathers and the copy stream's work; prefaultMin is the smallest C whose
// pages are asked for, since a small one's faults cost too little to be
// worth threads.
const (
	prefaultThreads = 4
	prefaultMin     = 16 << 20
)
