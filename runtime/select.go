package runtime

import (
	"fmt"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/cpu"
	"github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/kernels"
)

// The backends implement the runtime's interfaces without importing this
// package; the runtime imports them, so the check lives here.
var (
	_ Backend        = (*cpu.Backend)(nil)
	_ HostMemory     = (*cpu.Backend)(nil)
	_ Backend        = (*cuda.Backend)(nil)
	_ PinnedHost     = (*cuda.Backend)(nil)
	_ kernels.Device = (*cuda.Backend)(nil)
)

// openBackend starts the configured backend. With "auto" a machine without a
// usable CUDA driver or device falls back to the CPU, and the returned note
// says why, for --info.
func openBackend(cfg config.Config) (Backend, string, error) {
	switch cfg.Backend {
	case "cpu":
		b, err := openCPU(cfg)
		return b, "cpu: chosen by configuration", err
	case "cuda":
		b, err := openCUDA(cfg)
		return b, "cuda: chosen by configuration", err
	default:
		b, cudaErr := openCUDA(cfg)
		if cudaErr == nil {
			return b, "auto: a CUDA device is present", nil
		}
		cb, err := openCPU(cfg)
		return cb, fmt.Sprintf("auto: no usable CUDA device (%v); using the CPU backend", cudaErr), err
	}
}

func openCPU(cfg config.Config) (Backend, error) {
	capacity, err := cfg.CPUCapacity()
	if err != nil {
		return nil, fmt.Errorf("cpu.memory: %w", err)
	}
	b, err := cpu.New(cpu.Config{Capacity: capacity, Threads: cfg.CPU.Threads})
	if err != nil {
		return nil, err
	}
	return b, nil
}

func openCUDA(cfg config.Config) (Backend, error) {
	b, err := cuda.Load(cuda.Config{
		Device:      cfg.CUDA.Device,
		LibCUDA:     cfg.CUDA.LibCUDA,
		LibNVRTC:    cfg.CUDA.LibNVRTC,
		LibCUBLAS:   cfg.CUDA.LibCUBLAS,
		KernelCache: cfg.CUDA.KernelCache,
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}
