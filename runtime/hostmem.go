package runtime

import (
	"fmt"
	goruntime "runtime"
	"sync/atomic"
	"time"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
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
// bytes its live host arrays hold. Dropped host arrays are Go memory that
// only the collector returns, so a request over the limit first runs it.
func (rt *Runtime) reserveHost(nbytes uint64) error {
	if err := checkHost(nbytes); err != nil {
		return err
	}
	if rt.hostLimit == 0 {
		return nil
	}
	// Two rounds, as collect does: cleanups of one cycle may run after
	// that cycle's sentinel, but before the next one's.
	for round := 0; round < 2 && uint64(rt.hostHeld.Load())+nbytes > rt.hostLimit; round++ {
		collectAndWait(100 * time.Millisecond)
	}
	if held := uint64(rt.hostHeld.Load()); held+nbytes > rt.hostLimit {
		return &HostOOMError{Requested: nbytes, Available: config.AvailableMemory(), Limit: rt.hostLimit, Held: held}
	}
	return nil
}

// hostArrayBytes counts the bytes of Go's heap that the live host arrays
// of every runtime in the process hold: Go memory, but not Lua values, so
// the Lua memory limit leaves it out (luaMemory). Arrays in page-locked
// memory from the pinned cache are not on Go's heap.
var hostArrayBytes atomic.Int64

// trackHost counts h against the host limit, and out of the Lua memory
// limit, until h is unreachable.
func (rt *Runtime) trackHost(h *HostArray) *HostArray {
	limited, onHeap := rt.hostLimit > 0, h.owner == nil
	if !limited && !onHeap {
		return h
	}
	n := int64(len(h.data))
	if limited {
		rt.hostHeld.Add(n)
	}
	if onHeap {
		hostArrayBytes.Add(n)
	}
	goruntime.AddCleanup(h, func(n int64) {
		if limited {
			rt.hostHeld.Add(-n)
		}
		if onHeap {
			hostArrayBytes.Add(-n)
		}
	}, n)
	return h
}
