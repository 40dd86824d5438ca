package cuda_test

import (
	"testing"

	"github.com/gluaproject/glua/backend"
	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/cpu"
	"github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/cuda/cudatest"
)

// TestTheCPUBackendOnAGPUMachineTakesTheGPUsLimits: the limits read
// without a context are the loaded backend's, and a CPU backend opened on
// this machine applies them, so it refuses what this GPU refuses.
func TestTheCPUBackendOnAGPUMachineTakesTheGPUsLimits(t *testing.T) {
	b := cudatest.Shared(t)
	got := b.Limits()
	if got.ThreadsPerBlock < 1024 || got.Block[0] < 1024 || got.Grid[0] < 1<<31-1 ||
		got.SharedPerBlock != 48<<10 || got.SharedPerBlockOptin < got.SharedPerBlock || got.WarpSize != 32 || got.RegistersPerBlock == 0 {
		t.Errorf("implausible limits: %+v", got)
	}
	probed, err := cuda.ProbeLimits(cuda.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if probed != got {
		t.Errorf("ProbeLimits = %+v, the loaded backend's %+v", probed, got)
	}
	cfg := config.Default()
	cfg.Backend = "cpu"
	cb, _, err := backend.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	if l := cb.(*cpu.Backend).Limits(); l != got {
		t.Errorf("the CPU backend's limits are %+v, the GPU's %+v", l, got)
	}
	if l, note := backend.DeviceLimits(cfg); l != got || note == "" {
		t.Errorf("backend.DeviceLimits = %+v (%q), want the GPU's", l, note)
	}
}
