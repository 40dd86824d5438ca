package npy

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/device"
)

// writeRaw writes an .npy file from a header and data as given, right or
// wrong.
func writeRaw(t *testing.T, name string, h Header, data []byte) string {
	t.Helper()
	enc, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, append(enc, data...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// floats is n float32 values 1.5, 2.5, ... as little-endian bytes.
func floats(n int) []byte {
	b := make([]byte, 4*n)
	for i := range n {
		device.Set(device.Float32, b, i, float64(i)+1.5)
	}
	return b
}

func TestWrittenFileReadsBackTheSameBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.npy")
	data := floats(6)
	if err := WriteFile(path, Header{DType: device.Float32, Shape: []int{2, 3}}, data); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := make([]byte, f.NBytes())
	if err := f.ReadData(got); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %v (%v), want %v", got, err, data)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after a write, want only x.npy", len(entries))
	}
}

func TestDataOfTheWrongSizeIsAnErrorNamingTheFile(t *testing.T) {
	h := Header{DType: device.Float32, Shape: []int{2, 3}}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"short.npy", floats(4), "short.npy: truncated data: a 2x3 float32 array needs 24 bytes after the header, and the file has 16"},
		{"none.npy", nil, "none.npy: truncated data: a 2x3 float32 array needs 24 bytes after the header, and the file has 0"},
		{"long.npy", floats(8), "long.npy: file size does not match the header: a 2x3 float32 array needs 24 bytes after the header, and the file has 32"},
	} {
		path := writeRaw(t, c.name, h, c.data)
		_, err := Open(path)
		if err == nil || !strings.HasSuffix(err.Error(), c.want) || !strings.HasPrefix(err.Error(), path) {
			t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
		}
	}
}

func TestCorruptHeaderErrorNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corrupt.npy")
	os.WriteFile(path, []byte("\x93NUMPY\x01\x00\xff\x00{'descr'"), 0o644)
	_, err := Open(path)
	want := path + ": truncated header: it says 255 bytes but the file ends 8 bytes into it"
	var npyErr *Error
	if err == nil || err.Error() != want || !errors.As(err, &npyErr) || npyErr.Path != path {
		t.Fatalf("%v\nwant %s", err, want)
	}
}

func TestPathsThatAreNotFilesAreClearErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir)
	if err == nil || err.Error() != dir+": is a directory, not an .npy file" {
		t.Errorf("a directory: %v", err)
	}
	missing := filepath.Join(dir, "missing.npy")
	_, err = Open(missing)
	if err == nil || err.Error() != missing+": no such file or directory" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := Open(""); err == nil || err.Error() != "the path is empty" {
		t.Errorf("an empty path: %v", err)
	}
	if os.Geteuid() != 0 { // root reads anything
		locked := writeRaw(t, "locked.npy", Header{DType: device.Uint8, Shape: []int{1}}, []byte{1})
		os.Chmod(locked, 0)
		if _, err := Open(locked); err == nil || err.Error() != locked+": permission denied" {
			t.Errorf("an unreadable file: %v", err)
		}
	}
	if err := WriteFile(dir, Header{DType: device.Uint8, Shape: []int{1}}, []byte{1}); err == nil || err.Error() != dir+": is a directory" {
		t.Errorf("writing over a directory: %v", err)
	}
	nowhere := filepath.Join(dir, "no", "such", "x.npy")
	err = WriteFile(nowhere, Header{DType: device.Uint8, Shape: []int{1}}, []byte{1})
	if err == nil || err.Error() != nowhere+": cannot create a file in its directory: no such file or directory" {
		t.Errorf("writing into a missing directory: %v", err)
	}
}

func TestWriteRefusesBFloat16AndDataOfTheWrongSize(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.npy")
	err := WriteFile(path, Header{DType: device.BFloat16, Shape: []int{2}}, make([]byte, 4))
	if err == nil || !strings.HasPrefix(err.Error(), path+": bfloat16 has no NumPy dtype") {
		t.Errorf("bfloat16: %v", err)
	}
	err = WriteFile(path, Header{DType: device.Float32, Shape: []int{2}}, make([]byte, 4))
	if err == nil || err.Error() != path+": 4 bytes of data given for a 2 float32 array, which has 8" {
		t.Errorf("short data: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused writes left %d files", len(entries))
	}
}

func TestWriteKeepsAnExistingFilesPermissionsAndWritesThroughALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.npy")
	os.WriteFile(target, []byte("old"), 0o604)
	link := filepath.Join(dir, "link.npy")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := WriteFile(link, Header{DType: device.Uint8, Shape: []int{3}}, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st.Mode(), err)
	}
	st, _ := os.Stat(target)
	if runtime.GOOS != "windows" && st.Mode().Perm() != 0o604 {
		t.Errorf("target's permissions %v, want the old file's 0604", st.Mode().Perm())
	}
	f, err := Open(target)
	if err != nil || f.Shape[0] != 3 {
		t.Fatalf("target after writing through the link: %v", err)
	}
	f.Close()
}

func TestBigEndianDataIsSwappedOnRead(t *testing.T) {
	want := []float64{1.5, -2.25, 1e300}
	be := make([]byte, 8*len(want))
	for i, v := range want {
		device.Set(device.Float64, be, i, v)
	}
	swapBytes(be, 8)
	path := writeRaw(t, "be.npy", Header{DType: device.Float64, Shape: []int{3}, BigEndian: true}, be)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := make([]byte, f.NBytes())
	if err := f.ReadData(got); err != nil {
		t.Fatal(err)
	}
	for i, v := range want {
		if g := device.Get(device.Float64, got, i); g != v {
			t.Errorf("element %d: %v, want %v", i, g, v)
		}
	}
	if _, err := f.Map(); err == nil || !strings.Contains(err.Error(), "be.npy: big-endian data cannot be memory-mapped") {
		t.Errorf("mapping big-endian data: %v", err)
	}
}

func openMapped(t *testing.T, path string) *Mapping { return mapFile(t, Open, path) }

// mapFile opens path with open (Open or OpenWritable) and maps its data.
func mapFile(t *testing.T, open func(string) (*File, error), path string) *Mapping {
	t.Helper()
	if !CanMap {
		t.Skip("this system does not map files")
	}
	f, err := open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := f.Map()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMappedDataIsTheFilesAndReadOnly(t *testing.T) {
	data := floats(1000)
	m := openMapped(t, writeRaw(t, "m.npy", Header{DType: device.Float32, Shape: []int{10, 100}}, data))
	if !bytes.Equal(m.Bytes(), data) {
		t.Fatal("mapped bytes differ from the file's data")
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	func() {
		defer func() {
			if recover() == nil {
				t.Error("writing into a mapped file did not fault")
			}
		}()
		m.Bytes()[0] = 1
	}()
	if err := m.Close(); err != nil || m.Bytes() != nil || m.Close() != nil {
		t.Errorf("Close: %v; a second Close is harmless", err)
	}
	empty := openMapped(t, writeRaw(t, "empty.npy", Header{DType: device.Float32, Shape: []int{0, 3}}, nil))
	if len(empty.Bytes()) != 0 || empty.Close() != nil {
		t.Error("an empty array maps to no bytes")
	}
}

// The mapping goes once nothing refers to it: a loop that maps files and
// drops them holds no address space.
func TestMappingIsReleasedOnceUnreachable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/maps")
	}
	path := writeRaw(t, "gone.npy", Header{DType: device.Float32, Shape: []int{1 << 16}}, floats(1<<16))
	mapped := func() bool {
		maps, _ := os.ReadFile("/proc/self/maps")
		return bytes.Contains(maps, []byte(path))
	}
	m := openMapped(t, path)
	if !mapped() || math.IsNaN(device.Get(device.Float32, m.Bytes(), 0)) {
		t.Fatal("the file is not in /proc/self/maps while mapped")
	}
	m = nil
	for deadline := time.Now().Add(5 * time.Second); mapped(); {
		if time.Now().After(deadline) {
			t.Fatal("the mapping outlived the Mapping")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}
