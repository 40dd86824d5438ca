//go:build linux

package runtime_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/npy"
	"github.com/gluaproject/glua/runtime"
)

// sparseOnFullTmpfs mounts a 1 MiB tmpfs and makes on it a sparse .npy of
// a 4 MiB float32 array (as NumPy's open_memmap does): the file system
// cannot hold its data. It skips where mounting needs a privilege the
// test does not have.
func sparseOnFullTmpfs(t *testing.T) (string, []int) {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skip("cannot mount a tmpfs here:", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	shape := []int{1 << 18, 4}
	h := npy.Header{DType: device.Float32, Shape: shape}
	head, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sparse.npy")
	if err := os.WriteFile(path, head, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(len(head))+h.NBytes()); err != nil {
		t.Fatal(err)
	}
	return path, shape
}

// downloadIntoFullFileSystem downloads a device array into a writable
// mapping of a sparse file whose file system is full, and checks that
// this is an error naming the file, and that the runtime goes on.
func downloadIntoFullFileSystem(t *testing.T, rt *runtime.Runtime) {
	path, shape := sparseOnFullTmpfs(t)
	w, err := rt.LoadNPY(path, runtime.NPYOptions{MMap: true, Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := rt.Full(shape, 1, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free()
	_, err = d.CopyToHost(w)
	var fe *npy.FaultError
	if !errors.As(err, &fe) || fe.Path != path || !strings.Contains(err.Error(), "file system is full") {
		t.Fatalf("download into a sparse file on a full file system: %v, want a fault naming %s", err, path)
	}
	if err := w.Set(shape[0]*shape[1]-1, 2); !errors.As(err, &fe) {
		t.Errorf("a write past the blocks the file system had: %v", err)
	}
	if sum, err := rt.Sum(d); err != nil || sum != float64(shape[0]*shape[1]) {
		t.Errorf("the runtime after the fault: sum %v, %v", sum, err)
	}
}

func TestDownloadIntoASparseFileOnAFullFileSystemIsAnError(t *testing.T) {
	downloadIntoFullFileSystem(t, newCPU(t, runtime.Options{}))
}

func TestDownloadIntoASparseFileOnAFullFileSystemIsAnErrorOnTheGPU(t *testing.T) {
	downloadIntoFullFileSystem(t, newCUDA(t))
}

// uploadFromTruncatedFile maps .npy files of a small array (copied in one
// piece) and a large one (staged through pinned slots on the GPU), cuts
// them to nothing underneath, and checks that uploading them is an error
// naming the file, that the device arrays keep what they held, and that
// the runtime goes on.
func uploadFromTruncatedFile(t *testing.T, rt *runtime.Runtime) {
	for _, n := range []int{16, 3 << 20} {
		path := filepath.Join(t.TempDir(), "cut.npy")
		w, err := rt.CreateNPY(path, []int{n}, device.Float32)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		r, err := rt.LoadNPY(path, runtime.NPYOptions{MMap: true})
		if err != nil {
			t.Fatal(err)
		}
		d, err := rt.Full([]int{n}, 2, device.Float32)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, 0); err != nil {
			t.Fatal(err)
		}
		var fe *npy.FaultError
		if _, err := rt.ToDevice(r); !errors.As(err, &fe) || fe.Path != path {
			t.Errorf("%d elements: ToDevice from a truncated mapping: %v, want a fault naming %s", n, err, path)
		}
		if err := d.CopyFrom(r); !errors.As(err, &fe) || fe.Path != path {
			t.Errorf("%d elements: CopyFrom a truncated mapping: %v, want a fault naming %s", n, err, path)
		}
		if _, err := d.CopyToHost(w); !errors.As(err, &fe) || fe.Path != path {
			t.Errorf("%d elements: CopyToHost into a truncated mapping: %v, want a fault naming %s", n, err, path)
		}
		if sum, err := rt.Sum(d); err != nil || sum != float64(2*n) {
			t.Errorf("%d elements: the device array after the failed copies sums to %v, %v; want %d", n, sum, err, 2*n)
		}
		d.Free()
	}
}

func TestUploadFromATruncatedMappedFileIsAnError(t *testing.T) {
	uploadFromTruncatedFile(t, newCPU(t, runtime.Options{}))
}

func TestUploadFromATruncatedMappedFileIsAnErrorOnTheGPU(t *testing.T) {
	uploadFromTruncatedFile(t, newCUDA(t))
}
