package cuda

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/gluaproject/glua/device"
)

// Limits are the device's limits on a kernel launch, read from its
// attributes when the backend was loaded.
func (b *Backend) Limits() device.Limits { return b.limits }

// probes remembers ProbeLimits' answers by device and driver library, so
// that the many CPU runtimes of a test binary on a GPU machine initialise
// the driver once.
var probes struct {
	sync.Mutex
	done map[string]probe
}

type probe struct {
	limits device.Limits
	err    error
}

// ProbeLimits reads the launch limits of cfg's device without loading
// NVRTC or cuBLAS and without a context, for a backend that stands in for
// this GPU (the CPU backend) and must refuse what it would refuse. On a
// machine without a driver it fails in milliseconds.
func ProbeLimits(cfg Config) (lim device.Limits, err error) {
	if len(cfg.LibCUDA) == 0 {
		cfg.LibCUDA = device.DefaultLibCUDA()
	}
	key := fmt.Sprint(cfg.Device, "|", strings.Join(cfg.LibCUDA, "|"))
	probes.Lock()
	defer probes.Unlock()
	if p, ok := probes.done[key]; ok {
		return p.limits, p.err
	}
	defer func() {
		if r := recover(); r != nil {
			lim, err = device.Limits{}, fmt.Errorf("cuda: reading the device's limits failed: %v", r)
		}
		if probes.done == nil {
			probes.done = map[string]probe{}
		}
		probes.done[key] = probe{lim, err}
	}()
	if cfg.Device < 0 {
		return device.Limits{}, fmt.Errorf("cuda: device %d: the ordinal must not be negative", cfg.Device)
	}
	b := &Backend{cfg: cfg}
	lib, err := openLibrary("CUDA driver", slices.Clone(cfg.LibCUDA))
	if err != nil {
		return device.Limits{}, err
	}
	b.libs[0] = lib
	if err := lib.resolve(b.drv.symbols()); err != nil {
		return device.Limits{}, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := b.queryDevice(); err != nil {
		return device.Limits{}, fmt.Errorf("cuda: %w", err)
	}
	return b.limits, nil
}
