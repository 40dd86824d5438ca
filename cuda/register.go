package cuda

import (
	"github.com/gluaproject/glua/backend"
	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
)

var _ backend.Backend = (*Backend)(nil)

func init() {
	backend.Register(backend.Driver{Name: "cuda", Device: "CUDA", Open: open, Limits: limits})
}

func limits(cfg config.Config) (device.Limits, error) {
	return ProbeLimits(Config{Device: cfg.CUDA.Device, LibCUDA: cfg.CUDA.LibCUDA})
}

func open(cfg config.Config) (backend.Backend, error) {
	b, err := Load(Config{
		Device:      cfg.CUDA.Device,
		LibCUDA:     cfg.CUDA.LibCUDA,
		LibNVRTC:    cfg.CUDA.LibNVRTC,
		LibCUBLAS:   cfg.CUDA.LibCUBLAS,
		LibNCCL:     cfg.CUDA.LibNCCL,
		KernelCache: cfg.CUDA.KernelCache,
	})
	if err != nil {
		return nil, err // not a typed nil inside the interface
	}
	return b, nil
}
