package cpu

import (
	"strings"
	"testing"

	"github.com/gluaproject/glua/backend"
	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
)

// With no GPU backend linked (this test binary links none), the CPU
// backend applies an H100's launch limits and says so in --info.
func TestWithoutAGPUTheCPUBackendAppliesAnH100sLimits(t *testing.T) {
	cfg := config.Default()
	cfg.Backend = "cpu"
	b, _, err := backend.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cb := b.(*Backend)
	want := device.DataCentreLimits()
	if got := cb.Limits(); got != want {
		t.Fatalf("limits %+v, want %+v", got, want)
	}
	if got := cb.Limits(); got.ThreadsPerBlock != 1024 || got.Block != [3]int{1024, 1024, 64} || got.Grid != [3]int{1<<31 - 1, 65535, 65535} ||
		got.SharedPerBlock != 48<<10 || got.SharedPerBlockOptin != 227<<10 || got.WarpSize != 32 {
		t.Fatalf("not an H100's limits: %+v", got)
	}
	d := strings.Join(cb.Describe(), "\n")
	if !strings.Contains(d, "1024 threads per block") || !strings.Contains(d, "NVIDIA H100") || !strings.Contains(d, "no GPU is present") {
		t.Errorf("--info line %q should give the limits and whose they are", d)
	}
}
