package pool_test

import (
	"errors"
	"fmt"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/pool"
)

// arena is a minimal Source: a bump allocator over a fixed capacity.
type arena struct{ next, capacity uint64 }

func (a *arena) Alloc(nbytes uint64) (device.Ptr, error) {
	if a.next+nbytes > a.capacity {
		return 0, fmt.Errorf("arena: %w", device.ErrOutOfMemory)
	}
	p := device.Ptr(a.next + 4096)
	a.next += nbytes
	return p, nil
}
func (a *arena) Free(device.Ptr, uint64) error          { return nil }
func (a *arena) MemInfo() (free, total uint64, _ error) { return a.capacity - a.next, a.capacity, nil }

func Example() {
	p, err := pool.New(&arena{capacity: 1 << 30}, pool.Config{HardLimit: 64 << 20})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	a, _ := p.Alloc(40<<20, 0)
	_ = p.Free(a)
	b, _ := p.Alloc(40<<20, 0) // served from the cache
	st := p.Stats()
	fmt.Println("hits:", st.CacheHits, "reserved:", st.Reserved>>20, "MiB")

	_, err = p.Alloc(32<<20, 0) // 72 MiB would pass the hard limit
	var oom *pool.OOMError
	fmt.Println(errors.As(err, &oom), errors.Is(err, device.ErrOutOfMemory))
	fmt.Println(err)
	_ = p.Free(b)
	// Output:
	// hits: 1 reserved: 40 MiB
	// true true
	// out of GPU memory: tried to allocate 32.00 MiB; hard limit 64.00 MiB, 40.00 MiB in use by 1 array, 0 B cached; device 984.00 MiB free of 1.00 GiB
}
