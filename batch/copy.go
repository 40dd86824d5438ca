package batch

import (
	goruntime "runtime"
	"sync"
)

// parallelMin is the size from which staging copies are split across
// threads: one thread copies pageable memory into pinned memory at about a
// tenth of what the bus takes (5 GB/s against 53 on the H100's host), so
// a stream of pageable batches would be bound by it.
const parallelMin = 4 << 20

// parallelCopy copies src into dst (of the same length) with up to one
// goroutine per processor, each a contiguous piece of at least
// parallelMin/2 bytes.
func parallelCopy(dst, src []byte) {
	inParts(len(src), len(src), func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
}

// parallelRows calls copyRow for rows 0..n-1 of rowBytes each, sharing
// them among threads when there is enough to copy.
func parallelRows(n, rowBytes int, copyRow func(r int)) {
	inParts(n, n*rowBytes, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			copyRow(r)
		}
	})
}

// inParts calls work over 0..n split into contiguous ranges, one goroutine
// each, when the bytes those ranges move are enough to be worth threads.
func inParts(n, bytes int, work func(lo, hi int)) {
	parts := min(goruntime.GOMAXPROCS(0), bytes/(parallelMin/2), n)
	if bytes < parallelMin || parts < 2 {
		work(0, n)
		return
	}
	step := (n + parts - 1) / parts
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(lo, hi)
		}()
	}
	wg.Wait()
}
