package runtime_test

import (
	"testing"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/runtime"
)

// TestSandboxChecksKernelBoundsOnTheGPU: on the cuda backend a sandboxed
// script's kernels.compile is refused before NVRTC sees the source, and a
// kernels.jit kernel asked for no bounds checks still stops at an index past
// its array, writing nothing out of bounds. It skips without a GPU.
func TestSandboxChecksKernelBoundsOnTheGPU(t *testing.T) {
	c := config.Default()
	c.CUDA.KernelCache = t.TempDir()
	rt, err := runtime.New(runtime.Options{Config: &c, Backend: "cuda", Sandbox: true})
	if err != nil {
		cudatest.Unavailable(t, err)
	}
	t.Cleanup(func() { rt.Close() })
	if err := rt.DoString(sandboxKernelsScript); err != nil {
		t.Fatal(err)
	}
}
