package runtime

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/anonmem"
)

// HostOOMError is a host allocation that was refused before Go was asked
// for it: Go's own failure ends the process ("fatal error: runtime: out of
// memory"), where this is an error a script can catch. errors.Is(err,
// device.ErrOutOfMemory) holds.
type HostOOMError struct {
	Requested uint64 // bytes asked for
	Available uint64 // the machine's available memory; 0: unknown
	Limit     uint64 // [host] memory_limit in bytes; 0: none
	Held      uint64 // bytes this runtime's host arrays hold
}

func (e *HostOOMError) Error() string {
	msg := "out of host memory: tried to allocate " + config.FormatSize(e.Requested)
	if e.Limit > 0 {
		msg += fmt.Sprintf("; host limit %s, %s held by host arrays", config.FormatSize(e.Limit), config.FormatSize(e.Held))
	}
	if e.Available > 0 {
		msg += "; " + config.FormatSize(e.Available) + " available on this machine"
	}
	if e.Limit > 0 {
		msg += " (the limit is [host] memory_limit, GLUA_HOST_MEMORY_LIMIT or --host-memory-limit)"
	}
	return msg
}

// Unwrap makes errors.Is(err, device.ErrOutOfMemory) true.
func (e *HostOOMError) Unwrap() error { return device.ErrOutOfMemory }

// hostCheckBytes is the size from which a host allocation is checked
// against the machine's available memory; reading it costs a few
// microseconds, which smaller allocations need not pay.
const hostCheckBytes = 16 << 20

// checkHost refuses a host allocation of nbytes that the machine cannot
// give, before Go is asked for it.
func checkHost(nbytes uint64) error {
	if nbytes < hostCheckBytes {
		return nil
	}
	if avail := config.AvailableMemory(); avail > 0 && nbytes > avail {
		return &HostOOMError{Requested: nbytes, Available: avail}
	}
	return nil
}

// reserveHost is checkHost plus this runtime's host limit, counting the
// bytes its live host arrays hold and those its cache of download memory
// keeps (downloadMemory), which gives way first. Dropped host arrays are
// Go memory that only the collector returns, so a request over the limit
// then runs it.
func (rt *Runtime) reserveHost(nbytes uint64) error {
	if err := checkHost(nbytes); err != nil {
		if rt.xfer.downloads.release(false) == 0 {
			return err
		}
		if err := checkHost(nbytes); err != nil {
			return err
		}
	}
	if rt.xfer.hostLimit == 0 {
		return nil
	}
	over := func() bool { return !rt.hostFits(rt.xfer.downloads.cachedBytes() + int64(nbytes)) }
	// Two rounds, as collect does: cleanups of one cycle may run after
	// that cycle's sentinel, but before the next one's. A dropped download
	// array's memory goes to the cache, which the next round releases.
	for round := 0; round < 2 && over(); round++ {
		if rt.xfer.downloads.release(false); over() {
			collectAndWait(100 * time.Millisecond)
		}
	}
	if over() {
		rt.xfer.downloads.release(false)
	}
	if held := uint64(rt.xfer.hostHeld.Load()); held+nbytes > rt.xfer.hostLimit {
		return &HostOOMError{Requested: nbytes, Available: config.AvailableMemory(), Limit: rt.xfer.hostLimit, Held: held}
	}
	return nil
}

// hostArrayBytes counts the bytes of Go's heap that the live host arrays
// of every runtime in the process hold: Go memory, but not Lua values, so
// the Lua memory limit leaves it out (luaMemory). Arrays in page-locked
// memory from the pinned cache are not on Go's heap.
var hostArrayBytes atomic.Int64

// hostFits says whether n bytes more than the live host arrays hold fit
// under the host limit.
func (rt *Runtime) hostFits(n int64) bool {
	return rt.xfer.hostLimit == 0 || uint64(rt.xfer.hostHeld.Load()+n) <= rt.xfer.hostLimit
}

// trackHost counts h against the host limit, and out of the Lua memory
// limit, until h is unreachable.
func (rt *Runtime) trackHost(h *HostArray) *HostArray {
	limited, onHeap := rt.xfer.hostLimit > 0, h.owner == nil
	if !limited && !onHeap {
		return h
	}
	n := int64(len(h.data))
	if limited {
		rt.xfer.hostHeld.Add(n)
		// A dropped download array's cleanup may have cached its memory
		// after reserveHost made room and before h counted.
		rt.xfer.downloads.giveWay()
	}
	if onHeap {
		hostArrayBytes.Add(n)
	}
	goruntime.AddCleanup(h, func(n int64) {
		if limited {
			rt.xfer.hostHeld.Add(-n)
		}
		if onHeap {
			hostArrayBytes.Add(-n)
		}
	}, n)
	return h
}

// newDownloadArray is the new host array a download of shape and dt fills
// (CopyToHost with no destination). From stagedMin bytes its memory is
// mapped outside Go's heap (anonmem) and reused from one download array
// to the next (downloadMemory): Go zeroes reused heap memory on one
// thread before the copy can start, and fresh memory faults in its pages
// during the copy, where memory a dropped download array held is neither
// zeroed nor faulted again, and needs neither since the download
// overwrites every byte. On the H100's host, downloads into new Go arrays
// ran at 5–12 GB/s against 36–50 into existing ones. The memory is given
// back (for reuse) once the array and its views are unreachable, as a
// mapped file is unmapped then, and counts against the host limit as any
// host array does.
func (rt *Runtime) newDownloadArray(shape []int, dt device.DType) (*HostArray, error) {
	return rt.newMappedArray(shape, dt, false)
}

// newMappedArray is newDownloadArray, or NewResultArray's array when
// result is set: a large result collects before it maps fresh memory
// (take).
func (rt *Runtime) newMappedArray(shape []int, dt device.DType, result bool) (*HostArray, error) {
	nbytes := product(shape) * dt.Size()
	if nbytes < stagedMin {
		return rt.NewHostArray(shape, dt, false)
	}
	if err := rt.usable(); err != nil {
		return nil, err
	}
	if err := rt.reserveHost(uint64(nbytes)); err != nil {
		return nil, err
	}
	m, err := rt.xfer.downloads.take(nbytes, result)
	if errors.Is(err, anonmem.ErrUnsupported) {
		return rt.NewHostArray(shape, dt, false)
	}
	if err != nil {
		return nil, &HostOOMError{Requested: uint64(nbytes), Available: config.AvailableMemory()}
	}
	owner := &downloadPages{m: m}
	goruntime.AddCleanup(owner, rt.xfer.downloads.give, m)
	return rt.trackHost(&HostArray{data: m.Bytes()[:nbytes:nbytes], shape: append([]int(nil), shape...), dtype: dt, owner: owner}), nil
}

// NewResultArray is a host array for a result that will write every one
// of its bytes (batch.Matmul's product): a download's new array, whose
// memory, from stagedMin bytes, is that of a dropped download or result
// array reused as it is, neither zeroed nor faulted in again, or else new
// mapped memory. Its contents are unspecified until written. A smaller
// one is an ordinary zeroed host array.
func (rt *Runtime) NewResultArray(shape []int, dt device.DType) (*HostArray, error) {
	if _, err := rt.arrayBytes(shape, dt); err != nil {
		return nil, err
	}
	return rt.newMappedArray(shape, dt, true)
}

// downloadPages owns a download array's mapped memory: its cleanup gives
// the memory back once neither the array nor a view of it can be reached.
// It holds a pointer (the mapping, for PinInPlace), so Go never packs it
// into one block with other small objects (its tiny allocator), whose
// cleanup would then wait until every object in the block is unreachable.
type downloadPages struct{ m *anonmem.Mapping }

// downloadMemory is the mapped memory of download arrays: what live arrays
// hold, and a cache of what dropped ones held, by size rounded up to a
// huge page, downloadCacheMax bytes at most.
//
// Go's collector never counts the mapped bytes, so a loop that drops each
// downloaded array would map without end before a collection came, and
// find nothing in the cache. take stands in for Go's pacing (GOGC=100):
// once the bytes it handed out since the last collection began pass those
// that survived that collection (downloadPaceMin at least), it starts the
// next one on a goroutine of its own, beside the download that the memory
// is for, so that the cleanups of the arrays dropped meanwhile have filled
// the cache by the next request. A request the cache cannot serve waits
// for a collection under way; it collects itself only once twice the pace
// went out with none (a collection that cannot keep up), and otherwise
// maps new memory. A loop that drops each array so keeps two arrays'
// memory, and never waits for the collector: on the H100's host, a loop
// of 256 MiB downloads that waited for it on each request (and asked the
// kernel again for reused memory's pages) ran at 0.7 of the speed into an
// existing array, and at 0.83-0.87 without either.
type downloadMemory struct {
	live atomic.Int64 // bytes held by live arrays

	mu     sync.Mutex
	cache  map[int][]*anonmem.Mapping
	cached int64
	since  int64         // handed out since the last collection began
	kept   int64         // live after it
	ahead  chan struct{} // closed when the collection under way is over; nil: none
	closed bool          // Close: give the memory back to the system, cache none
	// fits says whether the live host arrays and n bytes more fit under
	// the host limit: the cache keeps nothing past it.
	fits func(n int64) bool
	// pinned holds the mappings PinInPlace page-locked; unpin, those of
	// them whose arrays died, for the runtime to unlock (unpinDownloads)
	// before they are reused or unmapped, and wake tells it there are
	// some.
	pinned map[*anonmem.Mapping]*inPlace
	unpin  []*anonmem.Mapping
	wake   func()
	// counts of take's work, for tests: memory mapped, collections
	// started ahead of need, and those a request waited for whole
	maps, aheadN, waitedN int64
}

// downloadPaceMin is the fewest bytes handed out between two collections
// (Go's own pacing collects a small heap every 4 MiB); downloadCacheMax
// the most bytes the cache keeps. A collection costs the host time beside
// the copies: on an H200's host, loops of 64 MiB and 256 MiB downloads
// into new arrays ran at 0.71-0.74 and 0.85-0.88 of downloads into an
// existing array with a collection every 64 MiB, and at 0.79-0.81 and
// 0.90-0.93 with one every 512 MiB, for 448 MiB more mapped memory.
var (
	downloadPaceMin  int64 = 512 << 20
	downloadCacheMax int64 = 2 << 30
)

// collectFirstMin is the smallest result array that collects before it
// maps fresh memory (take).
var collectFirstMin int64 = 256 << 20

// collectWait is how long a collection waits for its cleanups.
const collectWait = 100 * time.Millisecond

func downloadClass(n int) int { return (n + anonmem.Huge - 1) / anonmem.Huge * anonmem.Huge }

// take is memory for an n-byte download array: a cached mapping of its
// class, or a new one. A result of collectFirstMin bytes or more
// (collectFirst) that the cache cannot serve collects first, when memory
// went out since the last collection: a loop of products drops each
// result before the next, but the pace counts the operands that survive
// the collections too, so the dropped result was often not collected yet
// and the new one was fresh memory, whose pages the kernel faulted in
// and zeroed beside the product (a gigabyte: about 50 ms of twelve
// threads on an H200's host), where a collection costs a millisecond or
// two. A loop of downloads goes on collecting ahead instead: there a
// collection on the request's time cost more than the pages.
func (d *downloadMemory) take(n int, collectFirst bool) (m *anonmem.Mapping, err error) {
	class := downloadClass(n)
	d.mu.Lock()
	m = d.popLocked(class)
	if c := d.ahead; m == nil && c != nil {
		d.mu.Unlock() // the cleanups it waits for take the lock
		<-c
		d.mu.Lock()
		m = d.popLocked(class)
	}
	if m == nil && d.since > 0 && (d.since+int64(n) > 2*d.paceLocked() || collectFirst && int64(n) >= collectFirstMin) {
		d.waitedN++
		d.mu.Unlock()
		collectAndWait(collectWait)
		d.mu.Lock()
		d.since, d.kept = 0, d.live.Load()
		m = d.popLocked(class)
	}
	if d.since += int64(n); d.since >= d.paceLocked() && d.ahead == nil && !d.closed {
		d.collectAheadLocked()
	}
	fresh := m == nil
	if fresh {
		d.maps++
	}
	d.mu.Unlock()
	if fresh {
		if m, err = anonmem.Map(class); err != nil {
			return nil, err
		}
	}
	d.live.Add(int64(class))
	return m, nil
}

// paceLocked is how many bytes go out between two collections.
func (d *downloadMemory) paceLocked() int64 { return max(downloadPaceMin, d.kept) }

// collectAheadLocked starts a collection on a goroutine of its own: the
// arrays dropped before it go to the cache while the caller's download
// runs. The goroutine ends with the collection, Close or not.
func (d *downloadMemory) collectAheadLocked() {
	c := make(chan struct{})
	d.ahead, d.since = c, 0
	d.aheadN++
	go func() {
		collectAndWait(collectWait)
		d.mu.Lock()
		d.ahead, d.kept = nil, d.live.Load()
		d.mu.Unlock()
		close(c)
	}()
}

// popLocked takes a cached mapping of class bytes, or nil.
func (d *downloadMemory) popLocked(class int) *anonmem.Mapping {
	free := d.cache[class]
	if len(free) == 0 {
		return nil
	}
	m := free[len(free)-1]
	d.cache[class] = free[:len(free)-1]
	d.cached -= int64(class)
	return m
}

// give is a download array's cleanup: its memory goes to the cache, or
// back to the system when the cache is full, the host limit has no room
// for it, or the runtime closed; memory PinInPlace page-locked goes to
// the runtime first, to be unlocked. An unmapping that fails leaves the
// memory mapped: there is no one to tell, and the address space is all
// that is lost.
func (d *downloadMemory) give(m *anonmem.Mapping) {
	d.mu.Lock()
	if d.pinned[m] != nil {
		d.unpin = append(d.unpin, m)
		d.mu.Unlock()
		d.wake()
		return
	}
	d.mu.Unlock()
	d.cacheOrUnmap(m)
}

// cacheOrUnmap is give's work for memory that is not page-locked.
func (d *downloadMemory) cacheOrUnmap(m *anonmem.Mapping) {
	class := int64(len(m.Bytes()))
	d.live.Add(-class)
	d.mu.Lock()
	if !d.closed && d.cached+class <= downloadCacheMax && (d.fits == nil || d.fits(d.cached+class)) {
		if d.cache == nil {
			d.cache = map[int][]*anonmem.Mapping{}
		}
		d.cache[int(class)] = append(d.cache[int(class)], m)
		d.cached += class
		m = nil
	}
	d.mu.Unlock()
	if m != nil {
		_ = m.Unmap()
	}
}

// release gives the cached memory back to the system, and with closed
// set, memory given back later too; it returns how many bytes it freed.
func (d *downloadMemory) release(closed bool) int64 {
	d.mu.Lock()
	cache, freed := d.cache, d.cached
	d.cache, d.cached = nil, 0
	d.closed = d.closed || closed
	d.mu.Unlock()
	for _, ms := range cache {
		for _, m := range ms {
			_ = m.Unmap()
		}
	}
	return freed
}

// giveWay unmaps cached memory until what remains fits beside the live
// host arrays under the host limit. Give checks the limit under the same
// lock, so a cleanup cannot cache memory that a new array's count, made
// before the call, leaves no room for.
func (d *downloadMemory) giveWay() {
	var drop []*anonmem.Mapping
	d.mu.Lock()
	for class, ms := range d.cache {
		for len(ms) > 0 && d.fits != nil && !d.fits(d.cached) {
			drop = append(drop, ms[len(ms)-1])
			ms = ms[:len(ms)-1]
			d.cached -= int64(class)
		}
		d.cache[class] = ms
	}
	d.mu.Unlock()
	for _, m := range drop {
		_ = m.Unmap()
	}
}

// cachedBytes is what the cache holds.
func (d *downloadMemory) cachedBytes() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cached
}

// writeDownloadStatus is Status's line on the memory of download arrays,
// once there is any: it is outside Go's heap and the pool, so that no
// other figure shows it.
func (rt *Runtime) writeDownloadStatus(b *strings.Builder) {
	live, cached := rt.xfer.downloads.live.Load(), rt.xfer.downloads.cachedBytes()
	if live == 0 && cached == 0 {
		return
	}
	fmt.Fprintf(b, "\nHost memory of downloads: %s in new host arrays, %s kept for the next ones (at most %s)",
		config.FormatSize(uint64(live)), config.FormatSize(uint64(cached)), config.FormatSize(uint64(downloadCacheMax)))
}

// counts is what take did so far: memory mapped, collections started
// ahead of need, and those a request waited for whole.
func (d *downloadMemory) counts() (maps, ahead, waited int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.maps, d.aheadN, d.waitedN
}
