package npy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gluaproject/glua/device"
)

// A write that fails part way (here at a file-size limit of 64 KiB, as a
// full disk would) leaves the old file whole and no temporary file. The
// limit is set in a child process, since it binds the whole process.
func TestFailedWriteLeavesTheOldFileAndNoTemporary(t *testing.T) {
	if dir := os.Getenv("GLUA_NPY_FSIZE_CHILD"); dir != "" {
		limit := syscall.Rlimit{Cur: 64 << 10, Max: 64 << 10}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
			t.Skip("setrlimit:", err)
		}
		err := WriteFile(filepath.Join(dir, "x.npy"), Header{DType: device.Uint8, Shape: []int{1 << 20}}, make([]byte, 1<<20))
		if err == nil {
			t.Fatal("a 1 MiB write under a 64 KiB file-size limit succeeded")
		}
		os.WriteFile(filepath.Join(dir, "error"), []byte(err.Error()), 0o644)
		return
	}
	dir := t.TempDir()
	old := []byte("the old file")
	os.WriteFile(filepath.Join(dir, "x.npy"), old, 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^TestFailedWriteLeavesTheOldFileAndNoTemporary$")
	cmd.Env = append(os.Environ(), "GLUA_NPY_FSIZE_CHILD="+dir)
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "SKIP") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	msg, _ := os.ReadFile(filepath.Join(dir, "error"))
	want := filepath.Join(dir, "x.npy") + ": file too large (the file is left as it was)"
	if string(msg) != want {
		t.Errorf("error %q, want %q", msg, want)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "x.npy")); !bytes.Equal(got, old) {
		t.Errorf("x.npy now holds %d bytes, want the old file's %d", len(got), len(old))
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("directory holds %d entries, want x.npy and the child's error", len(entries))
	}
}

// TestCreateReservesTheArraysBlocks: Create allocates the data's blocks,
// so that a disk too full for the array fails the Create rather than the
// first write through a mapping (SIGBUS).
func TestCreateReservesTheArraysBlocks(t *testing.T) {
	dir := t.TempDir()
	probe, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	err = unix.Fallocate(int(probe.Fd()), 0, 0, 4096)
	probe.Close()
	if err != nil {
		t.Skip("this file system has no fallocate:", err)
	}
	path := filepath.Join(dir, "x.npy")
	h := Header{DType: device.Float32, Shape: []int{1 << 18}} // 1 MiB
	if err := Create(path, h); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Size != 128+h.NBytes() || st.Blocks*512 < h.NBytes() {
		t.Fatalf("a created 1 MiB array's file is %d bytes with %d allocated", st.Size, st.Blocks*512)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Header.Size() != 1<<18 {
		t.Fatalf("read back %+v", f.Header)
	}
}
