package cpu

import (
	"fmt"

	"github.com/gluaproject/glua/backend"
	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
)

var _ backend.Backend = (*Backend)(nil)

// The CPU is the backend "auto" falls back to when no GPU backend opens.
func init() {
	backend.Register(backend.Driver{Name: "cpu", Device: "CPU", Open: open, Fallback: true})
}

func open(cfg config.Config) (backend.Backend, error) {
	// The host is one device; taking another index as the host would
	// let a script written for a second GPU run on the wrong thing.
	if cfg.CUDA.Device != 0 {
		return nil, fmt.Errorf("cpu: device %d: the CPU backend has only device 0 (cuda.device)", cfg.CUDA.Device)
	}
	capacity, err := cfg.CPUCapacity()
	if err != nil {
		return nil, fmt.Errorf("cpu.memory: %w", err)
	}
	limits := func() (device.Limits, string) { return backend.DeviceLimits(cfg) }
	b, err := New(Config{Capacity: capacity, Threads: cfg.CPU.Threads, LimitsFrom: limits})
	if err != nil {
		return nil, err
	}
	return b, nil
}
