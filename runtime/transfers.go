package runtime

import (
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
)

// transfers is the runtime's side of moving data between host and device:
// the copy and download streams, the Stagers, page-locked host memory and
// its cache under [host] pinned_limit (pinned.go), and the host limit with
// the reused memory of downloads (hostmem.go).
//
// stagers, pinned and pendingHost are guarded by the Runtime's mu, which
// the callers of the methods that touch them hold: the GC's cleanup
// goroutine queues pinned buffers, and Close takes the stagers. hostHeld
// is atomic, since host arrays' cleanups uncount themselves; downloads
// has a lock of its own. The rest only the runtime's goroutine touches.
type transfers struct {
	// copyStream and downloadStream are CopyStream's and DownloadStream's,
	// made on first use; they are also among the runtime's streams.
	copyStream, downloadStream *Stream
	// stagers not yet closed, whose threads Close stops before the memory
	// they copy into goes.
	stagers map[*Stager]struct{}
	// pinned maps each live page-locked host allocation by its first byte;
	// pendingHost holds those found unreachable, for drain to free.
	pinned      map[*byte]livePinned
	pendingHost [][]byte
	pinnedIDs   uint64 // the last pinnedMem.id given
	// pinnedCache keeps freed pinned buffers by size class for reuse;
	// pinnedLive and pinnedCached count the bytes of each kind against
	// [host] pinned_limit. asyncCopies counts asynchronous copies queued,
	// asyncSynced how many the device had finished at the last
	// synchronisation for reuse.
	pinnedCache              map[uint64][][]byte
	pinnedLive, pinnedCached uint64
	pinnedLimitBytes         uint64
	pinnedLimitRead          bool
	asyncCopies, asyncSynced uint64
	// hostLimit is [host] memory_limit in bytes (0: none); hostHeld counts
	// the bytes of this runtime's live host arrays against it.
	hostLimit uint64
	hostHeld  atomic.Int64
	// downloads is the memory of the new arrays of downloads, mapped
	// outside Go's heap and reused.
	downloads downloadMemory
}

func newTransfers() transfers {
	return transfers{pinned: make(map[*byte]livePinned)}
}

// addStager and dropStager keep the list of open stagers; takeStagers
// hands it over at Close. The caller holds mu.
func (x *transfers) addStager(st *Stager) {
	if x.stagers == nil {
		x.stagers = map[*Stager]struct{}{}
	}
	x.stagers[st] = struct{}{}
}

func (x *transfers) dropStager(st *Stager) { delete(x.stagers, st) }

func (x *transfers) takeStagers() map[*Stager]struct{} {
	st := x.stagers
	x.stagers = nil
	return st
}

// hostPending reports whether unreachable pinned buffers wait for drain.
// The caller holds mu.
func (x *transfers) hostPending() bool { return len(x.pendingHost) > 0 }

// unpin moves the live buffer starting at base, if allocation id still
// holds it, to the queue drain caches from. The caller holds mu.
func (x *transfers) unpin(base *byte, id uint64) bool {
	live, ok := x.pinned[base]
	ok = ok && live.id == id
	if ok {
		delete(x.pinned, base)
		x.pendingHost = append(x.pendingHost, live.buf)
	}
	return ok
}

// takeHost hands over the queued pinned buffers, and with all the live
// ones too. The caller holds mu.
func (x *transfers) takeHost(all bool) [][]byte {
	bufs := x.pendingHost
	x.pendingHost = nil
	if all {
		for base, live := range x.pinned {
			bufs = append(bufs, live.buf)
			delete(x.pinned, base)
		}
	}
	return bufs
}

// cache keeps freed pinned buffers for reuse, counting them as cached
// instead of live.
func (x *transfers) cache(bufs [][]byte) {
	if x.pinnedCache == nil {
		x.pinnedCache = map[uint64][][]byte{}
	}
	for _, b := range bufs {
		class := uint64(cap(b))
		x.pinnedLive -= min(x.pinnedLive, class)
		x.pinnedCache[class] = append(x.pinnedCache[class], b[:class])
		x.pinnedCached += class
	}
}

// reuse takes a cached buffer of class bytes, if there is one.
func (x *transfers) reuse(class uint64) ([]byte, bool) {
	free := x.pinnedCache[class]
	if len(free) == 0 {
		return nil, false
	}
	buf := free[len(free)-1]
	x.pinnedCache[class] = free[:len(free)-1]
	x.pinnedCached -= class
	return buf, true
}

// makeRoom releases cached buffers so that class bytes more fit under
// limit (0: none) with what is live and cached, or says why they cannot.
func (x *transfers) makeRoom(ph PinnedHost, class, limit uint64) error {
	if limit == 0 || x.pinnedLive+x.pinnedCached+class <= limit {
		return nil
	}
	x.release(ph, limit-min(limit, class))
	if x.pinnedLive+class > limit {
		return fmt.Errorf("%w: out of pinned host memory: tried to page-lock %s; %s held by pinned host arrays and staging, limit %s ([host] pinned_limit, GLUA_PINNED_LIMIT or --pinned-limit)",
			device.ErrOutOfMemory, config.FormatSize(class), config.FormatSize(x.pinnedLive), config.FormatSize(limit))
	}
	return nil
}

// release returns cached buffers to the driver, largest first, until live
// and cached memory fit in keep bytes or the cache is empty.
func (x *transfers) release(ph PinnedHost, keep uint64) []error {
	classes := slices.Sorted(maps.Keys(x.pinnedCache))
	var errs []error
	for i := len(classes) - 1; i >= 0; i-- {
		c := classes[i]
		for len(x.pinnedCache[c]) > 0 && x.pinnedLive+x.pinnedCached > keep {
			free := x.pinnedCache[c]
			buf := free[len(free)-1]
			x.pinnedCache[c] = free[:len(free)-1]
			x.pinnedCached -= c
			if err := ph.FreeHost(buf); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}
