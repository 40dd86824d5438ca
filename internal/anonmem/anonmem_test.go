package anonmem

import (
	"errors"
	"testing"
	"unsafe"
)

func TestMapGivesZeroedAlignedWritableMemory(t *testing.T) {
	for _, n := range []int{1, 4096, 3<<20 + 17} {
		m, err := Map(n)
		if errors.Is(err, ErrUnsupported) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		b := m.Bytes()
		if len(b) != n || cap(b) != n {
			t.Fatalf("Map(%d): len %d cap %d", n, len(b), cap(b))
		}
		if addr := uintptr(unsafe.Pointer(unsafe.SliceData(b))); addr%Huge != 0 {
			t.Errorf("Map(%d) starts at %#x, not on a huge page", n, addr)
		}
		for i, v := range b {
			if v != 0 {
				t.Fatalf("Map(%d): byte %d is %d, want 0", n, i, v)
			}
		}
		for i := range b {
			b[i] = byte(i)
		}
		if b[n-1] != byte(n-1) {
			t.Fatalf("Map(%d): the last byte did not keep what was written", n)
		}
		if err := m.Unmap(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMapRefusesNothing(t *testing.T) {
	if _, err := Map(0); err == nil {
		t.Error("Map(0) gave memory")
	}
}
