package regularfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestOnlyRegularFilesAreOpenedAndTheRestRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.lua")
	if err := os.WriteFile(file, []byte("return 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(file); err != nil || string(data) != "return 1\n" {
		t.Fatalf("a regular file: %q, %v", data, err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for path, want := range map[string]string{
		dir:         "cannot read " + dir + ": Is a directory",
		"/dev/zero": "cannot read /dev/zero: not a regular file (a character device)",
		fifo:        "cannot read " + fifo + ": not a regular file (a named pipe)",
	} {
		f, err := Open(path)
		var refused *Error
		if !errors.As(err, &refused) || err.Error() != want {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
		if f != nil {
			f.Close()
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusing took %v", d)
	}
	if data, err := ReadFile(os.DevNull); err != nil || len(data) != 0 {
		t.Errorf("/dev/null, the empty file: %q, %v", data, err)
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
