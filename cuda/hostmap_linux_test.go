package cuda

import "testing"

// mapHost's memory is zeroed, writable to its last byte, of the size asked
// for, and given back without error; no driver is needed for it.
func TestMapHostGivesZeroedWritableMemory(t *testing.T) {
	for _, n := range []uint64{1, 4096, 33<<20 + 5} {
		buf, err := mapHost(n)
		if err != nil {
			t.Fatalf("mapHost(%d): %v", n, err)
		}
		if uint64(len(buf)) != n {
			t.Errorf("mapHost(%d): %d bytes", n, len(buf))
		}
		for i := 0; i < len(buf); i += 4093 {
			if buf[i] != 0 {
				t.Fatalf("mapHost(%d): byte %d is %#x, want 0", n, i, buf[i])
			}
		}
		buf[0], buf[len(buf)-1] = 1, 2
		if err := unmapHost(buf); err != nil {
			t.Errorf("unmapHost of %d bytes: %v", n, err)
		}
	}
}
