package cuda

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKernelCacheEntryRoundTrips(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "k.cubin")
	image := []byte("\x7fELF pretend cubin \x00 with a zero inside")
	if err := writeCacheEntry(path, image); err != nil {
		t.Fatal(err)
	}
	got, err := readCacheEntry(path)
	if err != nil || string(got) != string(image) {
		t.Fatalf("read back %q, %v", got, err)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("cache directory holds %d files, want 1", len(entries))
	}
}

func TestDamagedKernelCacheEntriesAreNoticed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.cubin")
	if _, err := readCacheEntry(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing entry: %v, want ErrNotExist", err)
	}
	image := []byte("a perfectly good image")
	for name, damage := range map[string]func([]byte) []byte{
		"truncated":   func(b []byte) []byte { return b[:len(b)-3] },
		"flipped bit": func(b []byte) []byte { b[len(b)-1] ^= 1; return b },
		"header only": func(b []byte) []byte { return b[:len(cacheMagic)+32] },
		"garbage":     func([]byte) []byte { return []byte("not a cache entry at all, just text") },
		"empty":       func([]byte) []byte { return nil },
	} {
		if err := writeCacheEntry(path, image); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		if err := os.WriteFile(path, damage(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readCacheEntry(path); !errors.Is(err, errCacheCorrupt) {
			t.Errorf("%s: read gave %v, want errCacheCorrupt", name, err)
		}
	}
}

func TestKernelCacheKeyCoversEverythingThatChangesTheImage(t *testing.T) {
	base := cacheKey("src", "k.cu", []string{"-O3"}, "sm_90", [2]int{12, 4})
	if base != cacheKey("src", "k.cu", []string{"-O3"}, "sm_90", [2]int{12, 4}) {
		t.Fatal("the key is not deterministic")
	}
	for name, k := range map[string]string{
		"source":        cacheKey("src2", "k.cu", []string{"-O3"}, "sm_90", [2]int{12, 4}),
		"option":        cacheKey("src", "k.cu", []string{"-O2"}, "sm_90", [2]int{12, 4}),
		"no option":     cacheKey("src", "k.cu", nil, "sm_90", [2]int{12, 4}),
		"split option":  cacheKey("src", "k.cu", []string{"-O", "3"}, "sm_90", [2]int{12, 4}),
		"arch":          cacheKey("src", "k.cu", []string{"-O3"}, "sm_80", [2]int{12, 4}),
		"nvrtc version": cacheKey("src", "k.cu", []string{"-O3"}, "sm_90", [2]int{12, 5}),
		"program name":  cacheKey("src", "j.cu", []string{"-O3"}, "sm_90", [2]int{12, 4}),
		"name into src": cacheKey("srck.cu", "", []string{"-O3"}, "sm_90", [2]int{12, 4}),
	} {
		if k == base {
			t.Errorf("changing the %s does not change the key", name)
		}
	}
	if !strings.HasSuffix(cacheFile("/d", base, "compute_90"), ".ptx") || !strings.HasSuffix(cacheFile("/d", base, "sm_90"), ".cubin") {
		t.Error("cache file extension does not follow the image kind")
	}
}

func TestKernelTargetFollowsWhatNVRTCSupports(t *testing.T) {
	for _, tc := range []struct {
		cc     [2]int
		archs  []int
		cubin  bool
		want   string
		wantCB bool
		err    bool
	}{
		{[2]int{9, 0}, []int{75, 80, 86, 89, 90}, true, "sm_90", true, false},
		{[2]int{9, 0}, nil, true, "sm_90", true, false},
		{[2]int{10, 0}, []int{75, 80, 86, 89, 90}, true, "compute_90", false, false},
		{[2]int{8, 9}, []int{75, 80, 86}, true, "compute_86", false, false},
		{[2]int{9, 0}, []int{75, 80, 90}, false, "compute_90", false, false},
		{[2]int{9, 0}, nil, false, "compute_90", false, false},
		{[2]int{5, 0}, []int{75, 80}, true, "", false, true},
	} {
		arch, cubin, err := chooseTarget(tc.cc, tc.archs, tc.cubin)
		if (err != nil) != tc.err || arch != tc.want || cubin != tc.wantCB {
			t.Errorf("cc %v archs %v cubin %v: got %q %v %v, want %q %v err=%v", tc.cc, tc.archs, tc.cubin, arch, cubin, err, tc.want, tc.wantCB, tc.err)
		}
	}
}
