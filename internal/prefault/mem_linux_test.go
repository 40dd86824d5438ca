package prefault

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

func mapAnon(n int) ([]byte, func(), error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { unix.Munmap(b) }, nil
}

// resident is how many of b's bytes are in memory, by whole pages (b is
// page-aligned in the tests that ask).
func resident(b []byte) (int, error) {
	vec := make([]byte, (len(b)+pageSize-1)/pageSize)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	if errno != 0 {
		return 0, errno
	}
	n := 0
	for i, v := range vec {
		if v&1 != 0 {
			n += min(pageSize, len(b)-i*pageSize)
		}
	}
	return n, nil
}
