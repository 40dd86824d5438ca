package prefault

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrRefused is Pages' answer where the kernel would not populate the
// pages: it has no way to (MADV_POPULATE_WRITE came in Linux 5.14), or the
// memory may not be written.
var ErrRefused = errors.New("prefault: the kernel would not populate the pages (MADV_POPULATE_WRITE needs Linux 5.14 and writable memory)")

var pageSize = os.Getpagesize()

// inner is the range of b's whole pages: the kernel works in pages, and
// its requests must not reach memory outside b.
func inner(b []byte) (lo, hi int) {
	if len(b) == 0 {
		return 0, 0
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo = int((uintptr(pageSize) - addr%uintptr(pageSize)) % uintptr(pageSize))
	hi = lo + (len(b)-lo)/pageSize*pageSize
	return lo, max(lo, hi)
}

// adviseHuge lets the kernel back b with huge pages, which it then zeroes
// and maps 2 MiB at a time; b keeps the advice for later faults too. Where
// transparent huge pages are off this changes nothing.
func adviseHuge(b []byte) {
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice: refused is as if never given
}

func populate(b []byte) error {
	err := unix.Madvise(b, unix.MADV_POPULATE_WRITE)
	if errors.Is(err, unix.EINVAL) {
		return ErrRefused
	}
	return err
}
