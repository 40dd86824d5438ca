package runtime

import "github.com/gluaproject/glua/device"

// Backend is what the runtime needs from a device. The cuda and cpu packages
// implement it without importing this package (the method sets use only the
// device package's vocabulary), as database/sql drivers implement driver.Conn.
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
	NewEvent() (device.Event, error)
	DestroyEvent(e device.Event) error
	Record(e device.Event, s device.Stream) error
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

// HostMemory is implemented by backends whose memory the host can address
// directly (the CPU backend). The runtime runs the kernels package's Go
// implementations on such memory.
type HostMemory interface {
	// Bytes is the host view of nbytes at p. It stays valid until p is freed.
	Bytes(p device.Ptr, nbytes uint64) []byte
}
