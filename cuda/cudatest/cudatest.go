// Package cudatest gives tests a CUDA backend. On a machine without one it
// skips the test, unless the environment has GLUA_REQUIRE_CUDA=1: then it
// fails instead, so that a run on a GPU machine cannot pass by skipping.
package cudatest

import (
	"os"
	"sync"
	"testing"

	"github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/device"
)

// Required reports whether GLUA_REQUIRE_CUDA=1 is set.
func Required() bool { return os.Getenv("GLUA_REQUIRE_CUDA") == "1" }

// Unavailable skips t, or fails it when CUDA is required, for the reason err.
func Unavailable(t testing.TB, err error) {
	t.Helper()
	if Required() {
		t.Fatalf("GLUA_REQUIRE_CUDA=1 but CUDA is unavailable: %v", err)
	}
	t.Skipf("no CUDA: %v", err)
}

var shared struct {
	once     sync.Once
	b        *cuda.Backend
	err      error
	cacheDir string
}

// Shared returns one backend for the whole test process, with its kernel
// cache in a temporary directory. Sharing it keeps the primary context
// alive between tests, which saves recreating it (a few hundred
// milliseconds) for every test. Call Main from TestMain to close it.
func Shared(t testing.TB) *cuda.Backend {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "glua-cudatest-")
		if err != nil {
			shared.err = err
			return
		}
		shared.cacheDir = dir
		shared.b, shared.err = cuda.Load(cuda.Config{KernelCache: dir})
	})
	if shared.err != nil {
		Unavailable(t, shared.err)
	}
	return shared.b
}

// Stream is a new stream of b, destroyed when t ends; a failure to make
// or to destroy it fails t.
func Stream(t testing.TB, b *cuda.Backend) device.Stream {
	t.Helper()
	s, err := b.NewStream()
	if err != nil {
		t.Fatalf("a new stream: %v", err)
	}
	t.Cleanup(func() {
		if err := b.DestroyStream(s); err != nil {
			t.Errorf("destroying a stream: %v", err)
		}
	})
	return s
}

// Load returns a new backend for cfg, closed when t ends. An empty
// cfg.KernelCache becomes a fresh temporary directory, so tests never touch
// the user's cache.
func Load(t testing.TB, cfg cuda.Config) *cuda.Backend {
	t.Helper()
	if cfg.KernelCache == "" {
		cfg.KernelCache = t.TempDir()
	}
	b, err := cuda.Load(cfg)
	if err != nil {
		Unavailable(t, err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// Main runs the tests, then closes the shared backend and removes its
// cache. Use it as TestMain(m) { cudatest.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	if shared.b != nil {
		shared.b.Close()
	}
	if shared.cacheDir != "" {
		os.RemoveAll(shared.cacheDir)
	}
	os.Exit(code)
}
