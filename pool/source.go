package pool

import "github.com/gluaproject/glua/device"

// Source is where the pool draws raw memory from: a backend's allocator.
// runtime.Backend satisfies it.
type Source interface {
	// Alloc returns nbytes of memory; when the device has no room the error
	// wraps device.ErrOutOfMemory.
	Alloc(nbytes uint64) (device.Ptr, error)
	// Free returns memory obtained from Alloc; nbytes is what was asked for.
	Free(p device.Ptr, nbytes uint64) error
	// MemInfo is the device's free and total memory in bytes.
	MemInfo() (free, total uint64, err error)
}

// EventSource is implemented by sources whose work runs asynchronously on
// streams (the cuda backend). Memory freed on a stream is reused on that
// stream at once (stream order makes it safe) and on another stream only
// once an event recorded on the first after the free is done. The pool
// records that event lazily, when another stream looks for memory, when it
// trims its cache or at Synchronized, so a program on one stream never
// pays for one; a block given to RecordStream gets its events at the free.
// So a stream must stay valid until the pool has seen it done: synchronise
// the device and call Synchronized (or free nothing on it) before destroying
// it. A Source without EventSource is taken to be synchronous (the cpu
// backend): freed memory may be reused on any stream at once.
type EventSource interface {
	NewEvent() (device.Event, error)
	DestroyEvent(e device.Event) error
	Record(e device.Event, s device.Stream) error
	// EventDone reports, without waiting, whether the work before e is done.
	EventDone(e device.Event) (bool, error)
}

// DeviceSynchronizer is implemented by sources that can wait for all queued
// work. When memory runs short (the ladder's second rung), on Reclaim, when
// limits are lowered and on Close, the pool synchronises so that blocks still
// waiting on another stream's work can be reused or released instead of
// staying stuck behind events nobody will record again.
type DeviceSynchronizer interface {
	Synchronize() error
}

// AsyncSource is the driver's stream-ordered allocator (cuMemAllocAsync and
// cuMemFreeAsync on a CUmemoryPool), used by strategy "cuda". The driver
// caches freed memory itself; the pool still accounts for every block, reads
// how much the driver holds, and enforces the hard limit on that.
type AsyncSource interface {
	AllocAsync(nbytes uint64, s device.Stream) (device.Ptr, error)
	FreeAsync(p device.Ptr, s device.Stream) error
	// SetReleaseThreshold is how much freed memory the driver may keep
	// cached across synchronisations; the pool sets it from the limits.
	SetReleaseThreshold(nbytes uint64) error
	// TrimTo releases cached memory until the driver's pool holds at most
	// keep bytes, in use or cached, or has nothing cached left.
	TrimTo(keep uint64) error
	// PoolReserved is what the driver's pool holds from the device, in use
	// or cached.
	PoolReserved() (uint64, error)
}
