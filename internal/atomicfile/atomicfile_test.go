package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAFailedWriteLeavesTheFileAsItWasAndNothingBeside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Replace(path, func(f *os.File) error {
		f.WriteString("half of the new")
		f.Close()
		return errors.New("disk full")
	})
	if err == nil || err.Error() != "disk full (the file is left as it was)" {
		t.Fatalf("a failed write: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Fatalf("the file holds %q", data)
	}
	if err := Replace(path, func(f *os.File) error { f.WriteString("new"); return f.Close() }); err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(path)
	if data, _ := os.ReadFile(path); string(data) != "new" || info.Mode().Perm() != 0o600 {
		t.Fatalf("the file holds %q, mode %v", data, info.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d files left in the directory", len(entries))
	}
}

func TestWritableRefusesADirectoryAndAMissingOneWithoutTouchingTheFile(t *testing.T) {
	dir := t.TempDir()
	if err := Writable(dir); err == nil || err.Error() != "is a directory" {
		t.Errorf("a directory: %v", err)
	}
	if err := Writable(filepath.Join(dir, "no", "x")); !errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), dir) {
		t.Errorf("a missing directory: %v", err)
	}
	path := filepath.Join(dir, "x")
	if err := Writable(path); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("Writable left %d files", len(entries))
	}
}
