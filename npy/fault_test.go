//go:build linux

package npy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gluaproject/glua/device"
)

// truncated maps a 1 MiB float32 array, then cuts the file back to its
// header, as another program truncating it would.
func truncated(t *testing.T, open func(string) (*File, error)) (*Mapping, string) {
	t.Helper()
	path := writeRaw(t, "cut.npy", Header{DType: device.Float32, Shape: []int{1 << 18}}, floats(1<<18))
	m := mapFile(t, open, path)
	t.Cleanup(func() { m.Close() })
	if err := os.Truncate(path, 128); err != nil {
		t.Fatal(err)
	}
	return m, path
}

func wantFault(t *testing.T, err error, path string) {
	t.Helper()
	var fe *FaultError
	if !errors.As(err, &fe) || fe.Path != path {
		t.Fatalf("error %v, want a fault naming %s", err, path)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, path+": ") || !strings.Contains(msg, "truncated") || strings.Contains(msg, "runtime error") {
		t.Errorf("message %q should name the file and the likely causes, without Go's panic text", msg)
	}
}

func TestReadingATruncatedMappingIsAnErrorNamingTheFile(t *testing.T) {
	m, path := truncated(t, Open)
	var sum byte
	err := Access(func() {
		for _, b := range m.Bytes() {
			sum += b
		}
	})
	wantFault(t, err, path)
	if fe := err.(*FaultError); fe.Offset < 128 || fe.Offset >= 128+1<<20 {
		t.Errorf("fault at byte %d, outside the data", fe.Offset)
	}
	// The process goes on, and so do mappings of other files.
	other := openMapped(t, writeRaw(t, "whole.npy", Header{DType: device.Float32, Shape: []int{4}}, floats(4)))
	var got float64
	if err := Access(func() { got = device.Get(device.Float32, other.Bytes(), 3) }); err != nil || got != 4.5 {
		t.Fatalf("after a fault, reading another mapping gave %v, %v", got, err)
	}
}

func TestWritingATruncatedMappingIsAnErrorNamingTheFile(t *testing.T) {
	m, path := truncated(t, OpenWritable)
	wantFault(t, Access(func() { clear(m.Bytes()) }), path)
}

// A fault that is not on a mapped file is a bug, and stays a panic.
func TestFaultOutsideMappingsStillPanics(t *testing.T) {
	b, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Munmap(b); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("reading unmapped memory did not panic")
		}
	}()
	var x byte
	Access(func() { x = b[0] })
	t.Errorf("read %d from unmapped memory", x)
}

// A sparse .npy (as NumPy's open_memmap makes) on a file system that has
// filled up since: writing into its holes needs blocks there are none of.
// The test mounts a 1 MiB tmpfs, which needs the privilege to; without it
// it skips.
func TestWritingAHoleOnAFullFileSystemIsAnErrorNamingTheFile(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skip("cannot mount a tmpfs here:", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	path := filepath.Join(dir, "sparse.npy")
	h := Header{DType: device.Float32, Shape: []int{1 << 20}} // 4 MiB, more than the file system holds
	head, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, head, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(len(head))+h.NBytes()); err != nil {
		t.Fatal(err)
	}
	m := mapFile(t, OpenWritable, path)
	defer m.Close()
	wantFault(t, Access(func() {
		for i := range m.Bytes() {
			m.Bytes()[i] = 1
		}
	}), path)
}
