package prefault

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// Memory that may not be written cannot have writable pages: Pages says
// so, from whichever of its threads met the refusal first, instead of
// returning as if it had them.
func TestPagesReportsWhatTheKernelRefuses(t *testing.T) {
	pages(t, fresh(t, 4<<20), 2, nil) // skips where the kernel never populates
	b, err := unix.Mmap(-1, 0, 32<<20, unix.PROT_READ, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	if err := Pages(b, 4, nil); !errors.Is(err, ErrRefused) {
		t.Fatalf("Pages of read-only memory: %v, want ErrRefused", err)
	}
}
