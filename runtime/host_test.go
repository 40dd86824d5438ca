package runtime_test

import (
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/numpytest"
	"github.com/gluaproject/glua/npy"
	"github.com/gluaproject/glua/runtime"
)

// count is 1, 2, ... n as float64s: values every dtype holds exactly.
func count(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i + 1)
	}
	return v
}

func TestSavedNPYLoadsBackForEveryDTypeFromHostAndDevice(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	dir := t.TempDir()
	for _, dt := range []device.DType{device.Float32, device.Float64, device.Float16, device.Int32, device.Int64, device.Uint8} {
		h, err := runtime.HostArrayFromFloats(count(12), []int{3, 4}, dt)
		if err != nil {
			t.Fatal(err)
		}
		d, err := rt.ToDevice(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []runtime.AnyArray{h, d} {
			path := filepath.Join(dir, dt.String()+".npy")
			if err := rt.SaveNPY(path, x); err != nil {
				t.Fatalf("%s %T: %v", dt, x, err)
			}
			for _, opts := range []runtime.NPYOptions{{}, {MMap: true}, {Pinned: true}} {
				back, err := rt.LoadNPY(path, opts)
				if err != nil {
					t.Fatalf("%s %+v: %v", dt, opts, err)
				}
				if back.DType() != dt || !slices.Equal(back.Shape(), []int{3, 4}) || !slices.Equal(back.Floats(), count(12)) {
					t.Errorf("%s %T %+v: loaded %v %v", dt, x, opts, back, back.Floats())
				}
				if back.Mapped() != (opts.MMap && npy.CanMap) || back.Pinned() != opts.Pinned {
					t.Errorf("%s %+v: mapped %v pinned %v", dt, opts, back.Mapped(), back.Pinned())
				}
			}
		}
	}
}

func TestMappedNPYIsReadOnlyAndUploads(t *testing.T) {
	if !npy.CanMap {
		t.Skip("this system does not map files")
	}
	rt := newCPU(t, runtime.Options{})
	path := filepath.Join(t.TempDir(), "m.npy")
	h, _ := runtime.HostArrayFromFloats(count(6), []int{3, 2}, device.Float32)
	rt.SaveNPY(path, h)
	m, err := rt.LoadNPY(path, runtime.NPYOptions{MMap: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "the array is read-only: memory-mapped from " + path + "; map it writable (or load it without mmap) to write into it"
	if err := m.Set(0, 5); err == nil || err.Error() != want {
		t.Errorf("Set on a mapped array: %v\nwant %s", err, want)
	}
	row, _ := m.Rows(2, 3)
	if err := row.Set(0, 5); err == nil || !row.Mapped() {
		t.Errorf("a view of a mapped array is writable: %v", err)
	}
	d, err := rt.ToDevice(row)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Float64s(); !slices.Equal(got, []float64{3, 4, 5, 6}) {
		t.Errorf("uploaded rows 2-3: %v", got)
	}
	_, err = d.CopyToHost(row)
	if err == nil || !strings.HasPrefix(err.Error(), "destination is read-only: memory-mapped from "+path) {
		t.Errorf("downloading into a mapped array: %v", err)
	}
	if got := m.Floats(); !slices.Equal(got, count(6)) {
		t.Errorf("the mapped file changed: %v", got)
	}
	m = nil
	for range 3 {
		goruntime.GC() // a view keeps the mapping: reading it must not fault
	}
	if got := row.Floats(); !slices.Equal(got, []float64{3, 4, 5, 6}) {
		t.Errorf("rows 2-3 once the array they view is dropped: %v", got)
	}
}

// A file read counts against [host] memory_limit like any host array; a
// mapped one is the page cache's and does not.
func TestNPYReadCountsAgainstTheHostLimitAndMappedDoesNot(t *testing.T) {
	rt := newCPU(t, runtime.Options{HostMemoryLimit: "1MiB"})
	path := filepath.Join(t.TempDir(), "big.npy")
	if err := npy.WriteFile(path, npy.Header{DType: device.Float32, Shape: []int{512, 1024}}, make([]byte, 2<<20)); err != nil {
		t.Fatal(err)
	}
	_, err := rt.LoadNPY(path, runtime.NPYOptions{})
	var oom *runtime.HostOOMError
	if !errors.As(err, &oom) || !errors.Is(err, device.ErrOutOfMemory) || !strings.HasPrefix(err.Error(), path+": out of host memory: tried to allocate 2.0 MiB") {
		t.Fatalf("a 2 MiB file under a 1 MiB host limit: %v", err)
	}
	if !npy.CanMap {
		return
	}
	m, err := rt.LoadNPY(path, runtime.NPYOptions{MMap: true})
	if err != nil || m.NBytes() != 2<<20 {
		t.Fatalf("mapping it: %v", err)
	}
	if _, err := rt.NewHostArray([]int{1 << 18}, device.Float32, false); err != nil {
		t.Errorf("1 MiB of host array beside the mapped file: %v", err)
	}
}

// A file larger than the machine's memory is an out-of-memory error when
// read, and streams through the device when mapped: only the pages
// touched are read.
func TestNPYLargerThanMemoryIsAnErrorWhenReadAndStreamsWhenMapped(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	path := filepath.Join(t.TempDir(), "huge.npy")
	h := npy.Header{DType: device.Float32, Shape: []int{1 << 28, 1024}} // 1 TiB
	head, _ := h.Encode()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(head)
	err = f.Truncate(int64(len(head)) + h.NBytes()) // sparse: no disk used
	f.Close()
	if err != nil {
		t.Skip("this file system has no 1 TiB sparse files:", err)
	}
	_, err = rt.LoadNPY(path, runtime.NPYOptions{})
	if !errors.Is(err, device.ErrOutOfMemory) || !strings.Contains(err.Error(), "tried to allocate 1.0 TiB") {
		t.Fatalf("reading 1 TiB: %v", err)
	}
	if !npy.CanMap {
		return
	}
	m, err := rt.LoadNPY(path, runtime.NPYOptions{MMap: true})
	if err != nil {
		t.Skip("cannot map 1 TiB here:", err)
	}
	last, _ := m.Rows(1<<28, 1<<28)
	d, err := rt.ToDevice(last)
	if err != nil || d.Size() != 1024 {
		t.Fatalf("uploading the last row: %v", err)
	}
}

func TestNPYShapesGluaHasNotGotAndOptionsThatConflict(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	dir := t.TempDir()
	scalar := filepath.Join(dir, "scalar.npy")
	npy.WriteFile(scalar, npy.Header{DType: device.Float64, Shape: []int{}}, make([]byte, 8))
	h, err := rt.LoadNPY(scalar, runtime.NPYOptions{})
	if err != nil || !slices.Equal(h.Shape(), []int{1}) {
		t.Errorf("a 0-d array loads as shape {1}: %v %v", h, err)
	}
	empty := filepath.Join(dir, "empty.npy")
	npy.WriteFile(empty, npy.Header{DType: device.Int32, Shape: []int{0, 3}}, nil)
	for _, opts := range []runtime.NPYOptions{{}, {MMap: true}} {
		h, err := rt.LoadNPY(empty, opts)
		if err != nil || !slices.Equal(h.Shape(), []int{0, 3}) || h.Size() != 0 {
			t.Errorf("an empty array %+v: %v %v", opts, h, err)
		}
	}
	_, err = rt.LoadNPY(scalar, runtime.NPYOptions{MMap: true, Pinned: true})
	if err == nil || !strings.HasPrefix(err.Error(), scalar+": mmap and pinned cannot be combined") {
		t.Errorf("mmap and pinned: %v", err)
	}
}

func TestSaveNPYRefusesWhatNumPyCannotHoldBeforeDownloading(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	path := filepath.Join(t.TempDir(), "x.npy")
	b, _ := rt.Zeros([]int{4}, device.BFloat16)
	used := rt.Stats().Allocations
	err := rt.SaveNPY(path, b)
	if err == nil || err.Error() != path+": bfloat16 has no NumPy dtype; convert the array to float32 first, which holds every bfloat16 value exactly" {
		t.Errorf("bfloat16: %v", err)
	}
	f, _ := rt.Zeros([]int{4}, device.Float32)
	f.Free()
	if err := rt.SaveNPY(path, f); err == nil || err.Error() != path+": array: use of freed array" {
		t.Errorf("a freed array: %v", err)
	}
	for _, x := range []runtime.AnyArray{nil, (*runtime.HostArray)(nil), (*runtime.Array)(nil)} {
		if err := rt.SaveNPY(path, x); err == nil || err.Error() != path+": array is nil" {
			t.Errorf("a nil array %T: %v", x, err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) || rt.Stats().Allocations != used+1 {
		t.Errorf("refused saves wrote a file (%v) or downloaded", err)
	}
}

// Failed loads hold nothing: no file descriptor, no array, and the
// runtime carries on.
func TestFailedNPYLoadsLeaveNothingHeld(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.npy")
	os.WriteFile(corrupt, []byte("\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'"), 0o644)
	fds := func() int {
		entries, _ := os.ReadDir("/proc/self/fd")
		return len(entries)
	}
	before, live := fds(), rt.LiveArrays()
	for range 100 {
		for path, want := range map[string]string{
			dir:                             dir + ": is a directory, not an .npy file",
			filepath.Join(dir, "none.npy"):  filepath.Join(dir, "none.npy") + ": no such file or directory",
			corrupt:                         corrupt + ": truncated header: it says 16 bytes but the file ends 15 bytes into it",
			filepath.Join(dir, "x", "y.np"): filepath.Join(dir, "x", "y.np") + ": no such file or directory",
		} {
			for _, opts := range []runtime.NPYOptions{{}, {MMap: true}, {Pinned: true}} {
				if _, err := rt.LoadNPY(path, opts); err == nil || err.Error() != want {
					t.Fatalf("%s: %v\nwant %s", path, err, want)
				}
			}
		}
	}
	if goruntime.GOOS == "linux" && fds() != before {
		t.Errorf("%d file descriptors open after failed loads, %d before", fds(), before)
	}
	if rt.LiveArrays() != live {
		t.Errorf("%d live arrays after failed loads, %d before", rt.LiveArrays(), live)
	}
	if _, err := rt.Full([]int{4}, 1, device.Float32); err != nil {
		t.Errorf("the runtime after failed loads: %v", err)
	}
}

// A device array saved by glua is what NumPy loads, and a file NumPy
// saved streams, mapped, to the device unchanged.
func TestNumPyAndDeviceArraysExchangeNPYFiles(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	dir := t.TempDir()
	d, _ := rt.Rand([]int{3, 5}, device.Float32, nil)
	if err := rt.SaveNPY(filepath.Join(dir, "glua.npy"), d); err != nil {
		t.Fatal(err)
	}
	numpytest.Run(t, `
import sys
import numpy as np
d = sys.argv[1]
a = np.load(d + "/glua.npy")
assert a.dtype == np.float32 and a.shape == (3, 5), (a.dtype, a.shape)
a.tofile(d + "/glua.raw")
b = np.random.default_rng().uniform(1, 2, (4, 6))
np.save(d + "/numpy.npy", b)
b.tofile(d + "/numpy.raw")
`, dir)
	h, _ := d.CopyToHost(nil)
	if raw, _ := os.ReadFile(filepath.Join(dir, "glua.raw")); string(raw) != string(h.Bytes()) {
		t.Error("NumPy loaded other values than the device array's")
	}
	m, err := rt.LoadNPY(filepath.Join(dir, "numpy.npy"), runtime.NPYOptions{MMap: true})
	if err != nil {
		t.Fatal(err)
	}
	up, err := rt.ToDevice(m)
	if err != nil {
		t.Fatal(err)
	}
	back, _ := up.CopyToHost(nil)
	if raw, _ := os.ReadFile(filepath.Join(dir, "numpy.raw")); string(raw) != string(back.Bytes()) || back.DType() != device.Float64 {
		t.Error("the device holds other values than NumPy saved")
	}
}
