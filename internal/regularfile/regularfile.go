// Package regularfile opens the files glua reads whole (scripts, modules,
// configuration) only when they are regular files (or /dev/null). Reading
// /dev/zero whole never ends and takes all memory, and opening a FIFO no
// one writes blocks; such a path is refused at once, before it is opened,
// with an error that says what it is.
package regularfile

import (
	"io"
	"io/fs"
	"os"
)

// Error refuses a path that is not a regular file, in lua5.1's words:
// "cannot read dir: Is a directory".
type Error struct {
	Path string
	Kind string // "a directory", "a character device", "a named pipe", ...
}

func (e *Error) Error() string {
	if e.Kind == "a directory" {
		return "cannot read " + e.Path + ": Is a directory"
	}
	return "cannot read " + e.Path + ": not a regular file (" + e.Kind + ")"
}

// Open opens path for reading if it is a regular file. A path that is not
// one gives an *Error; one that cannot be opened, os.Open's error.
func Open(path string) (*os.File, error) {
	// Stat, not open: opening a FIFO waits for a writer.
	if fi, err := os.Stat(path); err == nil {
		if err := check(path, fi); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// The path may have been replaced between the two calls.
	fi, err := f.Stat()
	if err == nil {
		err = check(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// isDevNull says whether fi is /dev/null, the empty file by convention
// (GLUA_CONFIG=/dev/null for the built-in defaults), which reads nothing
// at once.
func isDevNull(fi fs.FileInfo) bool {
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(fi, null)
}

// ReadFile is os.ReadFile of a regular file only.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func check(path string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() || isDevNull(fi) {
		return nil
	}
	return &Error{Path: path, Kind: kind(fi.Mode())}
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	default:
		return "of mode " + m.Type().String()
	}
}
