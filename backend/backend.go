// Package backend is what a glua backend implements and where it makes
// itself known, as database/sql/driver is for a database driver: the
// Backend interface the runtime drives, and a registry that the cpu and
// cuda packages join from their init functions. The runtime chooses among
// the registered backends by name and never imports one; a program links
// the backends it wants by importing them:
//
//	import (
//		_ "github.com/gluaproject/glua/cpu"
//		_ "github.com/gluaproject/glua/cuda"
//	)
//
// What a backend can do beyond Backend (compile kernels, give cuBLAS a
// workspace, page-lock host memory) the runtime asks by type assertion on
// small interfaces of its own.
package backend

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
)

// Backend is what the runtime needs from a device. Its methods use only the
// device package's vocabulary, so a backend depends on nothing above it.
//
// Memory handed out by Alloc is raw: pooling, limits and accounting are the
// pool's business, which draws on a Backend as its pool.Source.
type Backend interface {
	// Name is "cuda" or "cpu".
	Name() string
	// Info describes the device, with free memory read now.
	Info() (device.Info, error)
	// MemInfo is the device's free and total memory in bytes.
	MemInfo() (free, total uint64, err error)

	// Alloc returns nbytes of uninitialised device memory, aligned to 256
	// bytes. An allocation the device has no room for returns an error
	// wrapping device.ErrOutOfMemory.
	Alloc(nbytes uint64) (device.Ptr, error)
	// Free returns memory obtained from Alloc; nbytes is the size asked for.
	Free(p device.Ptr, nbytes uint64) error

	// Upload copies src (host memory) to dst. It returns when src may be
	// reused; the copy is ordered on stream s.
	Upload(dst device.Ptr, src []byte, s device.Stream) error
	// Download copies len(dst) bytes from src to dst and returns when dst
	// holds them.
	Download(dst []byte, src device.Ptr, s device.Stream) error
	// Copy copies nbytes from src to dst on the device, ordered on s.
	Copy(dst, src device.Ptr, nbytes uint64, s device.Stream) error
	// Memset sets nbytes at dst to value, ordered on s.
	Memset(dst device.Ptr, value byte, nbytes uint64, s device.Stream) error

	// Gemm runs one matrix product; see device.Gemm.
	Gemm(g device.Gemm) error

	// Streams and events. The CPU backend runs everything at once, so its
	// events are complete as soon as they are recorded.
	NewStream() (device.Stream, error)
	DestroyStream(s device.Stream) error
	StreamSynchronize(s device.Stream) error
	// NewEvent creates an event for ordering work and waiting on it; it
	// keeps no time, which the driver records faster: on the H100,
	// staged uploads that wait on such events ran 2–5% faster than with
	// events that keep time. NewTimingEvent creates one that also keeps
	// the device time, which Elapsed needs of both its events.
	NewEvent() (device.Event, error)
	NewTimingEvent() (device.Event, error)
	DestroyEvent(e device.Event) error
	Record(e device.Event, s device.Stream) error
	// StreamWaitEvent makes the work queued on s from now on wait for
	// the work before e, which another stream recorded, without blocking
	// the host.
	StreamWaitEvent(s device.Stream, e device.Event) error
	EventSynchronize(e device.Event) error
	// EventDone reports whether the work before e has finished, without
	// waiting.
	EventDone(e device.Event) (bool, error)
	// Elapsed is the device time between two recorded events, in seconds.
	Elapsed(start, end device.Event) (float64, error)

	// Synchronize waits for all queued work on the device.
	Synchronize() error
	// Close releases the backend's own resources (contexts, handles). It
	// does not free memory obtained from Alloc: the pool owns that.
	Close() error
}

// Driver is a registered backend.
type Driver struct {
	// Name is what the configuration's backend setting calls it; Device is
	// how messages name its kind of device ("CUDA", "CPU").
	Name, Device string
	// Open starts the backend with the configuration's settings.
	Open func(cfg config.Config) (Backend, error)
	// Fallback marks the backend "auto" chooses only when no other
	// registered backend opens (the CPU).
	Fallback bool
	// Limits, when set, reads the launch limits of the device the
	// configuration names without opening the backend (DeviceLimits).
	Limits func(cfg config.Config) (device.Limits, error)
}

var (
	mu      sync.RWMutex
	drivers = map[string]Driver{}
)

// Register makes a backend available by name. Registering a second backend
// under a name, or one without a name or Open, panics, as sql.Register
// does: it is a programming error, found when the program starts.
func Register(d Driver) {
	mu.Lock()
	defer mu.Unlock()
	if d.Name == "" || d.Open == nil {
		panic("backend: Register of a driver without a name or an Open function")
	}
	if _, dup := drivers[d.Name]; dup {
		panic(fmt.Sprintf("backend: Register called twice for backend %q", d.Name))
	}
	drivers[d.Name] = d
}

// Names lists the registered backends, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(drivers))
	for name := range drivers {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Open starts the backend the configuration names. With "auto" it tries
// each registered backend that is not a fallback, in name order, then the
// fallbacks; the returned note says which was chosen and why, for --info.
func Open(cfg config.Config) (Backend, string, error) {
	mu.RLock()
	all := make([]Driver, 0, len(drivers))
	for _, d := range drivers {
		all = append(all, d)
	}
	mu.RUnlock()
	if len(all) == 0 {
		return nil, "", fmt.Errorf("no backend is linked into this program: import _ %q and/or _ %q", modulePath+"/cuda", modulePath+"/cpu")
	}
	if cfg.Backend != "auto" {
		for _, d := range all {
			if d.Name == cfg.Backend {
				b, err := d.Open(cfg)
				return b, cfg.Backend + ": chosen by configuration", err
			}
		}
		return nil, "", fmt.Errorf("backend %q is not linked into this program (linked: %v); import _ %q", cfg.Backend, Names(), modulePath+"/"+cfg.Backend)
	}
	slices.SortFunc(all, func(a, b Driver) int {
		if a.Fallback != b.Fallback {
			if a.Fallback {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name, b.Name)
	})
	var why []string
	for _, d := range all {
		b, err := d.Open(cfg)
		if err == nil {
			if len(why) == 0 {
				return b, "auto: a " + d.Device + " device is present", nil
			}
			return b, fmt.Sprintf("auto: %s; using the %s backend", strings.Join(why, "; "), d.Device), nil
		}
		why = append(why, fmt.Sprintf("no usable %s device (%v)", d.Device, err))
	}
	return nil, "", fmt.Errorf("auto: %s", strings.Join(why, "; "))
}

// modulePath is glua's module, for the import a missing backend needs.
var modulePath = strings.TrimSuffix(reflect.TypeFor[Driver]().PkgPath(), "/backend")

// DeviceLimits are the launch limits a backend that stands in for a GPU
// (the CPU) applies: those of the device the first registered GPU backend
// that can read them finds for the configuration, so that a script the
// stand-in accepts launches on the GPU glua would use, else
// device.DataCentreLimits. The note says where they came from, for --info.
func DeviceLimits(cfg config.Config) (device.Limits, string) {
	mu.RLock()
	var probes []Driver
	for _, d := range drivers {
		if d.Limits != nil && !d.Fallback {
			probes = append(probes, d)
		}
	}
	mu.RUnlock()
	slices.SortFunc(probes, func(a, b Driver) int { return strings.Compare(a.Name, b.Name) })
	for _, d := range probes {
		if l, err := d.Limits(cfg); err == nil {
			return l, "those of " + l.Device + ", the " + d.Device + " device present"
		}
	}
	l := device.DataCentreLimits()
	return l, "those of an " + l.Device + ", as no GPU is present"
}
