package cpu

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
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

// lazyProbe stands for a GPU backend whose limits take its driver to
// read: it answers, and counts, only the configurations naming its marker
// library, so that the other tests here still see no GPU.
var lazyProbe = struct {
	marker string
	limits device.Limits
	reads  atomic.Int32
}{marker: "lazy-probe-gpu.so", limits: device.Limits{Device: "Lazy Probe GPU", ThreadsPerBlock: 512, Block: [3]int{512, 512, 64},
	Grid: [3]int{1 << 20, 1024, 1024}, SharedPerBlock: 32 << 10, SharedPerBlockOptin: 64 << 10, WarpSize: 32, RegistersPerBlock: 1 << 16}}

func init() {
	backend.Register(backend.Driver{Name: "lazyprobe", Device: "Lazy Probe",
		Open: func(config.Config) (backend.Backend, error) { return nil, errors.New("lazyprobe: no device") },
		Limits: func(cfg config.Config) (device.Limits, error) {
			if !slices.Contains(cfg.CUDA.LibCUDA, lazyProbe.marker) {
				return device.Limits{}, errors.New("lazyprobe: no device")
			}
			lazyProbe.reads.Add(1)
			return lazyProbe.limits, nil
		}})
}

// Opening the CPU backend does not start a GPU's driver to read its
// limits: on a GPU host that costs every process of a job a fraction of a
// second, queued behind every other process doing it, for launches a
// launcher or a rank that only moves data never makes. The first launch
// (or --info) reads them, once.
func TestTheCPUBackendReadsTheGPUsLimitsOnlyWhenALaunchNeedsThem(t *testing.T) {
	cfg := config.Default()
	cfg.Backend = "cpu"
	cfg.CPU.Memory = "64MiB"
	cfg.CUDA.LibCUDA = []string{lazyProbe.marker}
	before := lazyProbe.reads.Load()
	b, _, err := backend.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cb := b.(*Backend)
	p, err := cb.Alloc(1024)
	if err != nil {
		t.Fatal(err)
	}
	if err := cb.Free(p, 1024); err != nil {
		t.Fatal(err)
	}
	if n := lazyProbe.reads.Load() - before; n != 0 {
		t.Fatalf("opening the backend and allocating read the GPU's limits %d times", n)
	}
	if got := cb.Limits(); got != lazyProbe.limits {
		t.Errorf("limits %+v, want the GPU's %+v", got, lazyProbe.limits)
	}
	d := strings.Join(cb.Describe(), "\n")
	if !strings.Contains(d, "512 threads per block") || !strings.Contains(d, "Lazy Probe GPU, the Lazy Probe device present") {
		t.Errorf("--info line %q should give the GPU's limits and say whose they are", d)
	}
	if n := lazyProbe.reads.Load() - before; n != 1 {
		t.Errorf("the GPU's limits were read %d times, want once", n)
	}
}
