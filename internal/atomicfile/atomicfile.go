// Package atomicfile replaces files whole: a new file is written beside
// the old one under a temporary name and renamed into place, so that the
// path holds its old content or the whole new file, never part of one,
// whatever fails (a full disk, a crash, a process killed mid-write). The
// .npy writer and the memory profile use it.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Replace writes a new file for path with write (which must close it)
// under a temporary name beside it and renames it into place; on an error
// the temporary file is removed and path is left as it was. A path that
// is a symbolic link is written through, and an existing file keeps its
// permissions. Errors do not name path: the caller does.
func Replace(path string, write func(*os.File) error) error {
	dest, keep, err := destination(path)
	if err != nil {
		return err
	}
	tmp, err := createTemp(dest)
	if err != nil {
		return fmt.Errorf("cannot create a file in its directory: %w", cause(err))
	}
	if keep != 0 {
		err = tmp.Chmod(keep)
	}
	if err == nil {
		err = write(tmp)
	} else {
		tmp.Close()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dest)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("%w (the file is left as it was)", cause(err))
	}
	return nil
}

// Writable checks, without touching path, that Replace could write it:
// path is not a directory and a file can be created beside it. It lets a
// program refuse a bad path before long work whose result goes there.
// Its error is the system's reason alone (no such file or directory).
func Writable(path string) error {
	dest, _, err := destination(path)
	if err != nil {
		return err
	}
	tmp, err := createTemp(dest)
	if err != nil {
		return cause(err)
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

// destination is the file path names, through a symbolic link, and an
// existing file's permissions, which the new one keeps.
func destination(path string) (dest string, keep os.FileMode, err error) {
	dest = path
	if target, err := filepath.EvalSymlinks(path); err == nil {
		dest = target
	}
	if st, err := os.Stat(dest); err == nil {
		if st.IsDir() {
			return "", 0, errors.New("is a directory")
		}
		keep = st.Mode().Perm()
	}
	return dest, keep, nil
}

// createTemp creates a new file beside dest, named after it so that one
// left by a killed process says what it was. Its permissions are a new
// file's: 0666 less the umask.
func createTemp(dest string) (*os.File, error) {
	dir, base := filepath.Split(dest)
	for {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64()%1e12, 36)+".tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, os.ErrExist) {
			return f, err
		}
	}
}

// cause is the system's reason without Go's "open PATH:" or "rename A B:"
// wrapping, which would name the temporary file.
func cause(err error) error {
	switch e := err.(type) {
	case *fs.PathError:
		return e.Err
	case *os.LinkError:
		return e.Err
	}
	return err
}
