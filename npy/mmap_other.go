//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package npy

import (
	"fmt"
	"os"
	"runtime"
)

// CanMap says whether this system maps files (File.Map); where it does
// not, a caller reads the file instead.
const CanMap = false

func mmapFile(f *os.File, size int, writable bool) ([]byte, error) {
	return nil, fmt.Errorf("memory-mapping files is not supported on %s", runtime.GOOS)
}

func munmap(b []byte) error { return nil }

func msync(b []byte) error { return nil }
