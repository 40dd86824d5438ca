package cpu

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/google/btree"

	"github.com/gluaproject/glua/device"
)

// Config sets up a CPU backend.
type Config struct {
	// Capacity is the simulated device memory in bytes. Allocations beyond
	// it fail with device.ErrOutOfMemory, as they would on a GPU of that
	// size; it must be set, because "unlimited" would hide the pool's OOM
	// handling from every test that runs here.
	Capacity uint64
	// Threads is the number of cores the backend reports as its
	// multiprocessors; 0 means GOMAXPROCS. gonum's BLAS sizes its own
	// worker set from GOMAXPROCS.
	Threads int
	// Limits are the launch limits of the GPU this backend stands in
	// for, which it applies to every kernel launch; the zero value means
	// device.DataCentreLimits. LimitsNote says where they came from.
	Limits     device.Limits
	LimitsNote string
	// LimitsFrom, when set and Limits is zero, gives the limits and their
	// note at the first launch or Describe instead. Reading a GPU's limits
	// starts its driver, which costs every process a fraction of a second
	// and queues behind every other process doing it; a CPU-backend job
	// that launches no kernel (a launcher, a rank moving data) must not
	// wait for a GPU it never uses.
	LimitsFrom func() (device.Limits, string)
}

// Backend is the host backend. It is safe for concurrent use.
type Backend struct {
	capacity uint64
	threads  int
	// limits gives the launch limits and where they came from, read once.
	limits func() (device.Limits, string)

	mu        sync.Mutex
	closed    bool
	allocated uint64
	// live holds every allocation ordered by base address, so that the
	// allocation containing any pointer (a view into the middle of an array)
	// is found in O(log n).
	live *btree.BTreeG[*allocation]
	// next is the base of the next allocation. Addresses only grow, so a
	// freed range is never handed out again and a stale pointer can never
	// alias a newer array.
	next device.Ptr

	streams    map[device.Stream]struct{}
	nextStream device.Stream
	events     map[device.Event]*event
	nextEvent  device.Event
	// host holds AllocHost's buffers until FreeHost (hostmem.go).
	host map[*byte]int
	// registered holds RegisterHost's ranges, by address, until
	// UnregisterHost.
	registered map[uintptr]int
	// captures are the streams recording a graph, graphs the recordings
	// ready to launch (graph.go).
	captures  map[device.Stream]*recording
	graphs    map[device.Graph]*recording
	nextGraph device.Graph
	// order follows which work is ordered before which (order.go).
	order order
}

// errClosed is returned by every call made after Close.
var errClosed = errors.New("cpu backend is closed")

// New creates a CPU backend with the given simulated capacity.
func New(cfg Config) (*Backend, error) {
	if !littleEndian() {
		return nil, errors.New("cpu.New: arrays are stored little-endian and this host is big-endian")
	}
	if cfg.Capacity == 0 {
		return nil, errors.New("cpu.New: Capacity must be set (the simulated device memory, e.g. 4 GiB)")
	}
	if cfg.Threads < 0 {
		return nil, fmt.Errorf("cpu.New: Threads must be 0 (GOMAXPROCS) or positive, got %d", cfg.Threads)
	}
	threads := cfg.Threads
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	limits := func() (device.Limits, string) { return cfg.Limits, cfg.LimitsNote }
	if cfg.Limits == (device.Limits{}) {
		limits = func() (device.Limits, string) {
			l := device.DataCentreLimits()
			return l, "those of an " + l.Device
		}
		if cfg.LimitsFrom != nil {
			limits = cfg.LimitsFrom
		}
	}
	return &Backend{
		capacity:   cfg.Capacity,
		threads:    threads,
		limits:     sync.OnceValues(limits),
		live:       btree.NewG(16, func(a, b *allocation) bool { return a.base < b.base }),
		next:       addressBase,
		streams:    map[device.Stream]struct{}{},
		nextStream: 1,
		events:     map[device.Event]*event{},
		nextEvent:  1,
	}, nil
}

// Name is "cpu".
func (b *Backend) Name() string { return "cpu" }

// DeviceCount is 1: the host is one device, which several processes
// share only when told they may (glua --allow-oversubscribe).
func (b *Backend) DeviceCount() int { return 1 }

// Info describes the simulated device.
func (b *Backend) Info() (device.Info, error) {
	free, total, err := b.MemInfo()
	if err != nil {
		return device.Info{}, fmt.Errorf("info: %w", err)
	}
	return device.Info{
		Name:            fmt.Sprintf("CPU (%d threads)", b.threads),
		TotalMemory:     total,
		FreeMemory:      free,
		Multiprocessors: b.threads,
	}, nil
}

// MemInfo reports capacity minus the bytes currently allocated, and capacity.
func (b *Backend) MemInfo() (free, total uint64, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, 0, fmt.Errorf("meminfo: %w", errClosed)
	}
	return b.capacity - b.allocated, b.capacity, nil
}

// Synchronize returns at once: every call has finished when it returns.
func (b *Backend) Synchronize() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("synchronize: %w", errClosed)
	}
	b.hostWaitedAll()
	return nil
}

// Close marks the backend closed; later calls fail. Allocations are their
// owner's (the pool's) to free first; whatever is left is given back here,
// since mapped memory is not the garbage collector's. Closing twice is
// harmless.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	var errs []error
	b.live.Ascend(func(a *allocation) bool {
		if err := a.release(); err != nil {
			errs = append(errs, err)
		}
		return true
	})
	b.live.Clear(false)
	b.allocated = 0
	return errors.Join(errs...)
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}
