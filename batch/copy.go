package batch

import (
	goruntime "runtime"
	"sync/atomic"

	"github.com/gluaproject/glua/internal/parallel"
	"github.com/gluaproject/glua/npy"
)

// parallelMin is the size from which staging copies are split across
// threads: one thread copies pageable memory into pinned memory at about a
// tenth of what the bus takes (5 GB/s against 53 on the H100's host), so
// batch.matmul's panels would be bound by it.
const parallelMin = 4 << 20

// parallelCopy copies src into dst (of the same length) with up to one
// goroutine per processor, each a contiguous piece of at least
// parallelMin/2 bytes.
func parallelCopy(dst, src []byte) error {
	return inParts(len(src), len(src), func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
}

// parallelRows calls copyRow for rows 0..n-1 of rowBytes each, sharing
// them among threads when there is enough to copy.
func parallelRows(n, rowBytes int, copyRow func(r int)) error {
	return inParts(n, n*rowBytes, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			copyRow(r)
		}
	})
}

// inParts calls work over 0..n in pieces of about copyPiece bytes, which
// up to one thread per processor claim in turn, when the bytes are enough
// to be worth threads. Claiming small pieces keeps every thread busy to
// the end when some are held back (by the copy stream's waits, the
// collector), and pieces under memmove's non-temporal threshold (1 MiB)
// copy with ordinary stores: on the H100's host, staging 64 MiB while the
// bus read the previous 64 MiB ran at 40 GB/s so, against 32-36 in 16 or
// 32 fixed ranges.
//
// Either side may be a memory-mapped file (an .npy loaded with mmap, an
// out made by cuda.create_npy), whose pages fault where another program
// truncated the file: each thread copies inside npy.Access, and the first
// such fault is the error, the other threads stopping at their next piece.
func inParts(n, bytes int, work func(lo, hi int)) error {
	threads := min(goruntime.GOMAXPROCS(0), bytes/(parallelMin/2), n)
	if bytes < parallelMin || threads < 2 {
		return npy.Access(func() { work(0, n) })
	}
	step := max(1, int(int64(n)*copyPiece/int64(bytes)))
	var next atomic.Int64
	var failed atomic.Pointer[error]
	parallel.Do(threads, func(int) {
		err := npy.Access(func() {
			for failed.Load() == nil {
				lo := int(next.Add(int64(step))) - step
				if lo >= n {
					return
				}
				work(lo, min(lo+step, n))
			}
		})
		if err != nil {
			failed.CompareAndSwap(nil, &err)
		}
	})
	if err := failed.Load(); err != nil {
		return *err
	}
	return nil
}

// copyPiece is the size of the pieces inParts hands out.
const copyPiece = 256 << 10
