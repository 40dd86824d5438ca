// Package gputest gives tests a runtime on the cuda backend, with its
// kernel cache in the test's temporary directory. Without a GPU the test
// skips, or fails under GLUA_REQUIRE_CUDA=1 (cudatest.Unavailable).
package gputest

import (
	"testing"

	"github.com/gluaproject/glua/config"
	_ "github.com/gluaproject/glua/cuda" // registers the cuda backend
	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/runtime"
)

// Runtime is a runtime on the GPU, closed when the test ends.
func Runtime(t testing.TB) *runtime.Runtime {
	t.Helper()
	c := config.Default()
	c.CUDA.KernelCache = t.TempDir()
	rt, err := runtime.New(runtime.Options{Config: &c, Backend: "cuda"})
	if err != nil {
		cudatest.Unavailable(t, err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}
