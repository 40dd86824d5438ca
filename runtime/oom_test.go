package runtime_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/pool"
	"github.com/gluaproject/glua/runtime"
)

// The out-of-memory error of a leaking loop names the line that leaks,
// with what it holds, before the other holders; arrays Go made are one
// holder of their own.
func TestOOMMessageNamesTheLeakingLine(t *testing.T) {
	rt := newCPU(t, runtime.Options{HardLimit: "64MiB"})
	fromGo, err := rt.Zeros([]int{128 << 10}, runtime.Float32) // 512 KiB
	if err != nil {
		t.Fatal(err)
	}
	err = rt.DoFile("testdata/leak.lua")
	if !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("the leaking loop ended with %v; want an out-of-memory error", err)
	}
	msg := err.Error()
	want := "\n  held by testdata/leak.lua:8: 60.00 MiB in 15 arrays; testdata/leak.lua:5: 1.00 MiB in 1 array; (allocated from Go): 512.00 KiB in 1 array"
	if !strings.Contains(msg, want) {
		t.Fatalf("OOM message\n%s\nlacks\n%s", msg, want)
	}
	if !strings.Contains(msg, "tried to allocate 4.00 MiB; hard limit 64.00 MiB") || strings.Contains(msg, "fragmented") {
		t.Fatalf("OOM message\n%s\nshould give the request and the limit, and no fragmentation", msg)
	}
	if n := strings.Count(msg, "\n"); n > 8 {
		t.Fatalf("OOM message has %d lines; keep it short:\n%s", n+1, msg)
	}
	var oom *pool.OOMError
	if !errors.As(err, &oom) || len(oom.Holders) != 3 || oom.Holders[0].Arrays != 15 {
		t.Fatalf("holders in the error's figures: %+v", oom)
	}
	if n := rt.LiveArrays(); n != 17 || fromGo.IsFreed() {
		t.Fatalf("%d arrays live after the OOM; the script's 16 and Go's one should survive", n)
	}
}

// When the memory is there in total but in pieces, the error says how much
// is free and the largest piece.
func TestOOMMessageShowsTheLargestFreeBlockWhenFragmented(t *testing.T) {
	rt := newCPU(t, runtime.Options{HardLimit: "64MiB"})
	err := rt.DoString(`
		local cuda = require("cuda")
		cuda.zeros({16, 1024, 1024}):free()       -- one 64 MiB segment, cached
		local kept = {}
		for i = 1, 8 do kept[i] = cuda.zeros({2, 1024, 1024}) end -- cut into 8 MiB arrays
		for i = 2, 8, 2 do kept[i]:free() end      -- every other one freed: 8 MiB holes
		local ok, err = pcall(cuda.zeros, {4, 1024, 1024})
		assert(not ok)
		error(err, 0)`)
	if err == nil {
		t.Fatal("a 16 MiB array fitted in 8 MiB holes")
	}
	for _, want := range []string{
		"tried to allocate 16.00 MiB",
		"\n  held by <string>:5: 32.00 MiB in 4 arrays",
		"\n  fragmented: 32.00 MiB is free (32.00 MiB cached, 0 B unreserved) but the largest free block is 8.00 MiB",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("OOM message\n%s\nlacks %q", err, want)
		}
	}
}

// An allocation the hard limit refuses names the limit's settings, with
// the same text on every backend but for the device's own figures; the
// CPU backend's capacity is named only when the capacity ran out.
func TestOOMUnderTheHardLimitNamesTheSameSettingsOnEveryBackend(t *testing.T) {
	script := `local ok, err = pcall(require("cuda").zeros, {100 * 1024 * 1024}); return err`
	message := func(rt *runtime.Runtime) string {
		t.Helper()
		if err := rt.DoString(script); err != nil {
			t.Fatal(err)
		}
		// the message, without the device's figures and its name for the memory
		msg := rt.Lua().Get(-1).String()
		msg = regexp.MustCompile(`out of [A-Za-z ]+ memory`).ReplaceAllString(msg, "out of memory")
		return regexp.MustCompile(`; device [^;(]+ free of [^;(]+ \(`).ReplaceAllString(msg, " (")
	}
	cpu := message(newCPU(t, runtime.Options{HardLimit: "64MiB"}))
	want := `<string>:1: cuda.zeros: out of memory: tried to allocate 400.00 MiB; hard limit 64.00 MiB, 0 B in use by 0 arrays, 0 B cached (the hard limit is [pool] hard_limit; raise it with pool.set_limit{hard = ...}, in config.toml, with GLUA_HARD_MEMORY_LIMIT or with --hard-limit)`
	if cpu != want {
		t.Fatalf("CPU backend:\n%s\nwant\n%s", cpu, want)
	}
	capacity := message(newCPU(t, runtime.Options{}))
	if !strings.Contains(capacity, `the CPU backend's capacity is [cpu] memory = "256MiB"`) || strings.Contains(capacity, "hard limit") {
		t.Errorf("the capacity ran out:\n%s\nshould name [cpu] memory and no hard limit", capacity)
	}
	c := config.Default()
	rt, err := runtime.New(runtime.Options{Config: &c, Backend: "cuda", HardLimit: "64MiB"})
	if err != nil {
		if cudatest.Required() {
			t.Fatalf("GLUA_REQUIRE_CUDA=1 but the cuda backend is unavailable: %v", err)
		}
		t.Logf("cuda backend unavailable, CPU checked only: %v", err)
		return
	}
	defer rt.Close()
	if gpu := message(rt); gpu != cpu {
		t.Errorf("cuda backend:\n%s\nCPU backend:\n%s", gpu, cpu)
	}
}
