package runtime_test

import (
	"errors"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// A pinned host array that is dropped leaves its buffer cached, and the
// next request of its size class takes it instead of page-locking anew;
// live and cached memory stay within [host] pinned_limit, the cache
// giving way first, and a request past it is an out-of-memory error that
// names the setting. On the CPU backend the same path runs on ordinary
// memory.
func TestPinnedHostMemoryIsCachedUnderItsLimit(t *testing.T) {
	rt := newCPU(t, runtime.Options{PinnedLimit: "8MiB"})
	const mib = 1 << 20
	h, err := rt.NewHostArray([]int{mib / 4}, runtime.Float32, true)
	if err != nil {
		t.Fatal(err)
	}
	if live, cached, limit := rt.PinnedStats(); live != mib || cached != 0 || limit != 8*mib {
		t.Fatalf("after one array: live %d, cached %d, limit %d", live, cached, limit)
	}
	h.Set(0, 7)
	h = nil
	if err := rt.DoString(`collectgarbage()`); err != nil {
		t.Fatal(err)
	}
	if live, cached, _ := rt.PinnedStats(); live != 0 || cached != mib {
		t.Fatalf("after dropping it: live %d, cached %d", live, cached)
	}
	again, err := rt.NewHostArray([]int{mib/4 - 100}, runtime.Float32, true) // the same class
	if err != nil {
		t.Fatal(err)
	}
	if live, cached, _ := rt.PinnedStats(); live != mib || cached != 0 {
		t.Fatalf("after reuse: live %d, cached %d", live, cached)
	}
	if v, _ := again.Get(0); v != 0 {
		t.Fatalf("a reused buffer starts at %v, want zero", v)
	}

	var keep []*runtime.HostArray
	for range 7 {
		h, err := rt.NewHostArray([]int{mib / 4}, runtime.Float32, true)
		if err != nil {
			t.Fatal(err)
		}
		keep = append(keep, h)
	}
	_, err = rt.NewHostArray([]int{mib / 4}, runtime.Float32, true)
	if !errors.Is(err, device.ErrOutOfMemory) || !strings.Contains(err.Error(), "pinned_limit") {
		t.Fatalf("past the pinned limit: %v", err)
	}
	goruntime.KeepAlive(again) // live until here: Go's collector would cache it early
	goruntime.KeepAlive(keep)
	keep, again = nil, nil
	if err := rt.DoString(`collectgarbage()`); err != nil {
		t.Fatal(err)
	}
	big, err := rt.NewHostArray([]int{6 * mib / 4}, runtime.Float32, true) // releases cached buffers to fit
	if err != nil {
		t.Fatalf("a larger array once the cache can give way: %v", err)
	}
	if live, cached, _ := rt.PinnedStats(); live+cached > 8*mib || live != 6*mib {
		t.Fatalf("after the larger array: live %d, cached %d", live, cached)
	}
	_ = big
	if s := rt.Status(); !strings.Contains(s, "Pinned host memory: 6.0 MiB in use") {
		t.Fatalf("status:\n%s", s)
	}
}

// ReleasePinned gives the memory back at once, without the collector.
func TestReleasePinnedCachesAtOnce(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	h, err := rt.NewHostArray([]int{1 << 18}, runtime.Float32, true)
	if err != nil {
		t.Fatal(err)
	}
	rt.ReleasePinned(h)
	if live, cached, _ := rt.PinnedStats(); live != 0 || cached != 1<<20 {
		t.Fatalf("after ReleasePinned: live %d, cached %d", live, cached)
	}
	plain, _ := rt.NewHostArray([]int{4}, runtime.Float32, false)
	rt.ReleasePinned(plain) // not page-locked: left alone
	if plain.Size() != 4 {
		t.Fatal("ReleasePinned touched a pageable array")
	}
}

// A buffer released early and handed out again belongs to its new array
// only: when the first array's views become unreachable later, their
// cleanup must not put the buffer back in the cache while the new array
// still uses it (two staging buffers would share memory).
func TestReleasedPinnedBufferIsNotCachedAgainByOldViews(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	first, err := rt.NewHostArray([]int{1024}, runtime.Float32, true)
	if err != nil {
		t.Fatal(err)
	}
	view, err := first.Rows(1, 512) // keeps the first owner reachable
	if err != nil {
		t.Fatal(err)
	}
	rt.ReleasePinned(first)
	second, err := rt.NewHostArray([]int{1024}, runtime.Float32, true)
	if err != nil {
		t.Fatal(err)
	}
	if &second.Bytes()[0] != &view.Bytes()[0] {
		t.Skip("the cache did not hand the released buffer out again")
	}
	view = nil
	for range 3 { // the old owner's cleanup runs, and the runtime drains it
		goruntime.GC()
		if err := rt.DoString(`collectgarbage()`); err != nil {
			t.Fatal(err)
		}
	}
	third, err := rt.NewHostArray([]int{1024}, runtime.Float32, true)
	if err != nil {
		t.Fatal(err)
	}
	if &third.Bytes()[0] == &second.Bytes()[0] {
		t.Fatal("a live pinned buffer was handed out a second time")
	}
	if live, _, _ := rt.PinnedStats(); live != 2*4096 {
		t.Fatalf("live pinned bytes %d, want two 4 KiB buffers", live)
	}
	goruntime.KeepAlive(second)
}
