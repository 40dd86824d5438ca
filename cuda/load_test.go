package cuda

import (
	"strings"
	"testing"
	"time"

	"github.com/ebitengine/purego"
)

func TestMissingDriverIsACleanErrorNamingEveryLibraryTried(t *testing.T) {
	start := time.Now()
	b, err := Load(Config{LibCUDA: []string{"libglua-missing-a.so", "libglua-missing-b.so.1"}})
	if err == nil {
		b.Close()
		t.Fatal("Load with bogus driver names succeeded")
	}
	msg := err.Error()
	want := "cuda: no CUDA driver: tried libglua-missing-a.so, libglua-missing-b.so.1: "
	if !strings.HasPrefix(msg, want) {
		t.Errorf("error %q does not start with %q", msg, want)
	}
	// dlerror's reason for each name follows, so the user sees why.
	if strings.Count(msg, "libglua-missing-a.so") < 2 || strings.Count(msg, "libglua-missing-b.so.1") < 2 {
		t.Errorf("error %q does not give dlerror's text for each name", msg)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("failing to find the driver took %v; backend=auto needs it fast", d)
	}
}

func TestMissingNVRTCAndCUBLASNameTheirLibraries(t *testing.T) {
	// Without a driver the driver error comes first; with one, these check
	// the later libraries. Either way no name may be dropped.
	for _, cfg := range []Config{
		{LibNVRTC: []string{"libglua-missing-nvrtc.so"}},
		{LibCUBLAS: []string{"libglua-missing-cublas.so"}},
	} {
		b, err := Load(cfg)
		if err == nil {
			b.Close()
			t.Fatalf("Load(%+v) succeeded", cfg)
		}
		msg := err.Error()
		if strings.Contains(msg, "no CUDA driver") {
			continue
		}
		for _, name := range append(cfg.LibNVRTC, cfg.LibCUBLAS...) {
			if !strings.Contains(msg, "tried "+name) {
				t.Errorf("error %q does not name %s", msg, name)
			}
		}
	}
}

func TestLibraryWithoutCUDASymbolsNamesTheMissingSymbol(t *testing.T) {
	if _, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW); err != nil {
		t.Skipf("no libc.so.6 to stand in for a wrong library: %v", err)
	}
	b, err := Load(Config{LibCUDA: []string{"libc.so.6"}})
	if err == nil {
		b.Close()
		t.Fatal("Load with libc as the driver succeeded")
	}
	for _, want := range []string{"libc.so.6", "has no symbol", "cuInit", "cuMemAlloc_v2", "cuLaunchKernel"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// Optional symbols are not reported as missing.
	if strings.Contains(err.Error(), "cuMemAllocFromPoolAsync") {
		t.Errorf("error %q reports an optional symbol", err)
	}
}

func TestNegativeDeviceIsRejected(t *testing.T) {
	_, err := Load(Config{Device: -1})
	if err == nil || !strings.Contains(err.Error(), "device -1") {
		t.Fatalf("Load(Device: -1) = %v, want an error naming device -1", err)
	}
}

func TestMappedPathFindsTheLibraryOfAnAddress(t *testing.T) {
	h, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW)
	if err != nil {
		t.Skipf("no libc.so.6: %v", err)
	}
	addr, err := purego.Dlsym(h, "malloc")
	if err != nil {
		t.Fatal(err)
	}
	path := mappedPath(addr)
	if !strings.Contains(path, "libc") || !strings.HasPrefix(path, "/") {
		t.Errorf("mappedPath(malloc) = %q, want an absolute path to libc", path)
	}
	if got := mappedPath(0); got != "" {
		t.Errorf("mappedPath(0) = %q, want empty", got)
	}
}

func TestMapsLineParsing(t *testing.T) {
	line := "7f1c2a000000-7f1c2a200000 r-xp 00000000 08:01 1234   /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15"
	for _, tc := range []struct {
		addr uintptr
		ok   bool
	}{
		{0x7f1c2a000000, true},
		{0x7f1c2a1fffff, true},
		{0x7f1c2a200000, false},
		{0x7f1c29ffffff, false},
	} {
		path, ok := mapsLineContains(line, tc.addr)
		if ok != tc.ok || (ok && path != "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15") {
			t.Errorf("mapsLineContains(%#x) = %q, %v; want ok=%v", tc.addr, path, ok, tc.ok)
		}
	}
	if _, ok := mapsLineContains("7f00-7f10 rw-p 00000000 00:00 0", 0x7f05); ok {
		t.Error("an anonymous mapping has no path but was reported")
	}
}

func TestKernelCacheSetting(t *testing.T) {
	if dir, why := kernelCacheDir("off"); dir != "" || why == "" {
		t.Errorf(`kernelCacheDir("off") = %q, %q; want disabled with a reason`, dir, why)
	}
	if dir, _ := kernelCacheDir("/some/dir"); dir != "/some/dir" {
		t.Errorf("an explicit directory became %q", dir)
	}
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if dir, _ := kernelCacheDir(""); dir != "/xdg/glua/kernels" {
		t.Errorf(`kernelCacheDir("") = %q, want /xdg/glua/kernels`, dir)
	}
}
