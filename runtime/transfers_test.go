package runtime

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// fakePinnedHost stands in for the driver's page-locked memory: it hands
// out Go memory and keeps the sizes of what it was given back.
type fakePinnedHost struct{ freed []int }

func (f *fakePinnedHost) AllocHost(nbytes uint64) ([]byte, error) { return make([]byte, nbytes), nil }

func (f *fakePinnedHost) FreeHost(buf []byte) error {
	f.freed = append(f.freed, cap(buf))
	return nil
}

// pinLive makes buf a live pinned allocation of the part, as newPinned
// does, and returns its base and id.
func pinLive(x *transfers, buf []byte) (*byte, uint64) {
	x.pinnedIDs++
	base := unsafe.SliceData(buf)
	x.pinned[base] = livePinned{buf, x.pinnedIDs}
	x.pinnedLive += uint64(cap(buf))
	return base, x.pinnedIDs
}

// Freed pinned buffers move from live to cached and back when reused:
// the two counts always add up to what the part holds of the driver's.
func TestTransfersCountPinnedBytesLiveOrCachedAcrossReuse(t *testing.T) {
	x := newTransfers()
	small, large := make([]byte, 4<<10), make([]byte, 2<<20)
	sBase, sID := pinLive(&x, small)
	lBase, _ := pinLive(&x, large)
	if x.unpin(sBase, sID+100) {
		t.Fatal("a stale allocation id unpinned a buffer reused since")
	}
	if !x.unpin(sBase, sID) || x.unpin(sBase, sID) {
		t.Fatal("unpin did not move the buffer once, and only once, to the queue")
	}
	if !x.hostPending() {
		t.Fatal("an unpinned buffer is not waiting for drain")
	}
	x.cache(x.takeHost(false))
	if x.hostPending() || x.pinnedLive != 2<<20 || x.pinnedCached != 4<<10 {
		t.Fatalf("after caching the small buffer: live %d, cached %d; want %d, %d", x.pinnedLive, x.pinnedCached, 2<<20, 4<<10)
	}
	if _, ok := x.reuse(8 << 10); ok {
		t.Fatal("reuse handed out a buffer of another size class")
	}
	buf, ok := x.reuse(4 << 10)
	if !ok || unsafe.SliceData(buf) != sBase || x.pinnedCached != 0 {
		t.Fatalf("reuse of the cached class: got it %v, cached %d afterwards", ok, x.pinnedCached)
	}
	// At Close, live buffers are handed over with the queued ones.
	if all := x.takeHost(true); len(all) != 1 || unsafe.SliceData(all[0]) != lBase || len(x.pinned) != 0 {
		t.Fatalf("takeHost(true) handed over %d buffers and left %d pinned; want the large one, none left", len(all), len(x.pinned))
	}
}

// Under [host] pinned_limit, the cache gives way first, largest class
// first; what live buffers alone hold past the limit is an out-of-memory
// error naming the setting.
func TestTransfersMakeRoomUnderThePinnedLimitFromTheCacheFirst(t *testing.T) {
	x := newTransfers()
	var ph fakePinnedHost
	const limit = 8 << 20
	x.cache([][]byte{make([]byte, 4<<10), make([]byte, 2<<20), make([]byte, 4<<20)})
	x.pinnedLive = 1 << 20
	if err := x.makeRoom(&ph, 512<<10, limit); err != nil || len(ph.freed) != 0 {
		t.Fatalf("room to spare: err %v, freed %v; want nothing freed", err, ph.freed)
	}
	// 1 MiB live, 6 MiB+4 KiB cached: 2 MiB more must drop the 4 MiB class.
	if err := x.makeRoom(&ph, 2<<20, limit); err != nil {
		t.Fatal(err)
	}
	if len(ph.freed) != 1 || ph.freed[0] != 4<<20 {
		t.Fatalf("freed %v, want the largest cached buffer only", ph.freed)
	}
	if x.pinnedLive+x.pinnedCached+2<<20 > limit {
		t.Fatalf("live %d + cached %d + 2 MiB still over the limit %d", x.pinnedLive, x.pinnedCached, limit)
	}
	x.pinnedLive = 7 << 20
	err := x.makeRoom(&ph, 2<<20, limit)
	if !errors.Is(err, device.ErrOutOfMemory) || !strings.Contains(err.Error(), "[host] pinned_limit") {
		t.Fatalf("past the limit with live buffers alone: %v", err)
	}
	if x.pinnedCached != 0 || len(ph.freed) != 3 {
		t.Fatalf("the cache kept %d bytes (freed %v) though live buffers need the room", x.pinnedCached, ph.freed)
	}
	if err := x.makeRoom(&ph, 1<<40, 0); err != nil {
		t.Fatalf("no limit: %v", err)
	}
}

func TestTransfersHandOverTheOpenStagersOnce(t *testing.T) {
	var x transfers
	a, b := &Stager{}, &Stager{}
	x.addStager(a)
	x.addStager(b)
	x.dropStager(a)
	if st := x.takeStagers(); len(st) != 1 {
		t.Fatalf("takeStagers() = %d stagers, want the one still open", len(st))
	}
	if st := x.takeStagers(); len(st) != 0 {
		t.Fatalf("second takeStagers() = %d stagers, want none", len(st))
	}
}
