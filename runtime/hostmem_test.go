package runtime_test

import (
	"bytes"
	"errors"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// A host array larger than the machine can give was Go's fatal "out of
// memory", which no recover catches; it is an error before Go is asked.
func TestHostArrayLargerThanTheMachineIsACatchableError(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	_, err := rt.NewHostArray([]int{1 << 20, 1 << 20}, device.Float32, false)
	if !errors.Is(err, device.ErrOutOfMemory) || !strings.Contains(err.Error(), "out of host memory: tried to allocate 4.0 TiB") {
		t.Fatalf("a 4 TiB host array: %v", err)
	}
	var hostErr *runtime.HostOOMError
	if !errors.As(err, &hostErr) || hostErr.Requested != 4<<40 {
		t.Fatalf("error %#v, want a *runtime.HostOOMError of 4 TiB", err)
	}
	err = rt.DoString(`
		local cuda = require("cuda")
		local ok, err = pcall(cuda.host_array, {1e12})
		assert(not ok and err:find("cuda.host_array: out of host memory", 1, true), tostring(err))
		assert(#cuda.host_array({16}) == 16, "the runtime carries on")`)
	if err != nil {
		t.Fatal(err)
	}
}

// The host limit counts what live host arrays hold, and dropped ones come
// back through the collector before a request is refused.
func TestHostMemoryLimitCountsLiveArraysAndCollectsDroppedOnes(t *testing.T) {
	rt := newCPU(t, runtime.Options{HostMemoryLimit: "64MiB"})
	err := rt.DoString(`
		local cuda = require("cuda")
		local keep = cuda.host_array({1024, 1024, 8}) -- 32 MiB
		local ok, err = pcall(cuda.host_array, {1024, 1024, 10}) -- 40 MiB more
		assert(not ok and err:find("host limit 64 MiB, 32 MiB held by host arrays", 1, true), tostring(err))
		for i = 1, 20 do local dropped = cuda.host_array({1024, 1024, 4}) end -- 16 MiB each
		local d = cuda.zeros({1024, 1024, 12}) -- 48 MiB
		local ok2, err2 = pcall(d.copy_to_host, d)
		assert(not ok2 and err2:find("out of host memory", 1, true), tostring(err2))
		keep = nil
		collectgarbage()
		assert(d:copy_to_host().size == 1024 * 1024 * 12, "fits once keep is gone")`)
	if err != nil {
		t.Fatal(err)
	}
}

// collectUntil runs the collector until cond holds, or fails after ten
// seconds: cleanups run on a goroutine of their own after a collection,
// which a loaded machine may leave waiting a while.
func collectUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		goruntime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("after collecting for ten seconds: %s", what)
}

// A download into a new array lands exactly, whatever its size; from 4
// MiB its memory is mapped outside Go's heap, by whole huge pages, and a
// view keeps it after the array itself is dropped. Once neither can be
// reached the memory waits in a cache, and the next download array of its
// size takes it, overwritten whole though it held the last one's bytes.
func TestDownloadsIntoNewArraysLandExactlyAndOutliveTheirArrayInViews(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		for _, n := range []int{1000, 5<<20 + 3, 64<<20 + 5} {
			class := int64((n + 2<<20 - 1) / (2 << 20) * (2 << 20))
			if n < 4<<20 {
				class = 0
			}
			liveBefore, _ := rt.DownloadBytes()
			// random bytes: randomHost's floats in [-1, 1) are uint8 zeros
			h, err := runtime.NewHostArray([]int{n}, runtime.Uint8)
			if err != nil {
				t.Fatal(err)
			}
			fillRandom(h.Bytes())
			a, err := rt.ToDevice(h)
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.CopyToHost(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), h.Bytes()) {
				t.Fatalf("%d bytes: the new array differs from what was uploaded", n)
			}
			if got.Pinned() || got.Mapped() || !got.Writable() {
				t.Errorf("%d bytes: the new array is pinned %v, a mapped file %v, writable %v; want an ordinary writable array",
					n, got.Pinned(), got.Mapped(), got.Writable())
			}
			live, _ := rt.DownloadBytes()
			if live-liveBefore != class && live != liveBefore { // equal: a system without anonymous mappings
				t.Errorf("%d bytes: %d bytes mapped, want %d", n, live-liveBefore, class)
			}
			view, err := got.Rows(n/2, n/2+100)
			if err != nil {
				t.Fatal(err)
			}
			got = nil
			for range 3 {
				goruntime.GC()
				time.Sleep(5 * time.Millisecond)
			}
			if !bytes.Equal(view.Bytes(), h.Bytes()[n/2-1:n/2+100]) {
				t.Fatalf("%d bytes: a view's bytes changed once its array was dropped", n)
			}
			goruntime.KeepAlive(view)
			view = nil
			collectUntil(t, "the dropped array's memory is still held", func() bool {
				live, _ := rt.DownloadBytes()
				return live == liveBefore
			})
			_, cached := rt.DownloadBytes()
			if class > 0 && cached < class {
				t.Errorf("%d bytes: the cache keeps %d bytes, want the dropped array's %d", n, cached, class)
			}
			fillRandom(h.Bytes())
			if err := a.CopyFrom(h); err != nil {
				t.Fatal(err)
			}
			if got, err = a.CopyToHost(nil); err != nil || !bytes.Equal(got.Bytes(), h.Bytes()) {
				t.Fatalf("%d bytes, a second download: %v, or the array differs from the upload", n, err)
			}
			if _, after := rt.DownloadBytes(); after != cached-class {
				t.Errorf("%d bytes: the second download left %d bytes cached of %d; want the first one's memory taken", n, after, cached)
			}
			goruntime.KeepAlive(got)
			got = nil
			a.Free()
			// the next size starts from none live, whenever cleanups run
			collectUntil(t, "the second download's memory is still held", func() bool {
				live, _ := rt.DownloadBytes()
				return live == liveBefore
			})
		}
	})
}

// Under a host limit a download array counts while it lives, and the
// cache its memory goes to afterwards gives way to a request that the
// limit would refuse.
func TestDownloadArraysCountAgainstTheHostLimitAndTheirCacheGivesWay(t *testing.T) {
	eachBackendWith(t, runtime.Options{HostMemoryLimit: "256MiB"}, func(t *testing.T, rt *runtime.Runtime) {
		d, err := rt.Zeros([]int{40 << 20}, runtime.Uint8)
		if err != nil {
			t.Fatal(err)
		}
		held, err := d.CopyToHost(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.NewHostArray([]int{230 << 20}, runtime.Uint8, false); err == nil {
			t.Fatal("230 MiB more fit under a host limit of 256 MiB beside a 40 MiB download")
		}
		goruntime.KeepAlive(held)
		held = nil
		big, err := rt.NewHostArray([]int{230 << 20}, runtime.Uint8, false)
		if err != nil {
			t.Fatalf("once the download array is dropped: %v", err)
		}
		collectUntil(t, "the dropped download's memory is still held", func() bool {
			live, _ := rt.DownloadBytes()
			return live == 0
		})
		if live, cached := rt.DownloadBytes(); live+cached+230<<20 > 256<<20 {
			t.Errorf("%d bytes of download memory live and %d cached beside 230 MiB under a limit of 256 MiB", live, cached)
		}
		goruntime.KeepAlive(big)
	})
}

// The collector does not see memory mapped outside its heap, so a loop
// that drops each download array would map without end before a
// collection came: the runtime starts a collection once as many bytes
// were handed out since the last one began as survived it, and the arrays
// dropped meanwhile fill the cache that the next ones take from. The
// collection runs beside the downloads: a request waits for one whole
// only when the collections cannot keep up, where collecting on the
// request's own time each time the cache ran dry held up every download
// of such a loop.
func TestDroppedDownloadArraysAreReusedInALoop(t *testing.T) {
	defer runtime.SetDownloadPaceMin(32 << 20)()
	rt := newCPU(t, runtime.Options{})
	a, err := rt.Zeros([]int{8 << 20}, runtime.Uint8)
	if err != nil {
		t.Fatal(err)
	}
	most := int64(0)
	const loops = 60
	for range loops {
		h, err := a.CopyToHost(nil)
		if err != nil {
			t.Fatal(err)
		}
		live, cached := rt.DownloadBytes()
		most = max(most, live+cached)
		goruntime.KeepAlive(h)
	}
	if most == 0 {
		t.Skip("no anonymous mappings on this system")
	}
	// 32 MiB between collections; the arrays dropped before one are a
	// cleanup away, then cached
	if most > 80<<20 {
		t.Errorf("%d MiB mapped at most over %d dropped 8 MiB downloads, want 80 at most", most>>20, loops)
	}
	// a collection every four downloads; collecting on a request's time
	// whenever the cache is empty would be one every four or five
	maps, ahead, waited := rt.DownloadCounts()
	if ahead < loops/8 || waited > 2 || maps > 16 {
		t.Errorf("over %d dropped 8 MiB downloads: %d collections ahead of need, %d waited for, %d mappings; "+
			"want %d ahead at least, 2 waited for and 16 mappings at most", loops, ahead, waited, maps, loops/8)
	}
}

// A loop that drops each download array reuses their memory while
// collections run beside the copies, and each array still holds exactly
// what the device array held at its download, never a byte of the array
// whose memory it took over.
func TestDownloadsInALoopOfDroppedArraysLandExactly(t *testing.T) {
	defer runtime.SetDownloadPaceMin(16 << 20)()
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		const n, loops = 6<<20 + 5, 24
		h, err := rt.NewHostArray([]int{n}, runtime.Uint8, false)
		if err != nil {
			t.Fatal(err)
		}
		a, err := rt.ToDevice(h)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Free()
		maps0, _, _ := rt.DownloadCounts()
		for i := range loops {
			fillRandom(h.Bytes())
			if err := a.CopyFrom(h); err != nil {
				t.Fatal(err)
			}
			got, err := a.CopyToHost(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), h.Bytes()) {
				t.Fatalf("download %d of a loop that drops each: the new array differs from the device's", i+1)
			}
		}
		if maps, _, _ := rt.DownloadCounts(); maps > maps0 && maps-maps0 > loops/2 {
			t.Errorf("%d of %d dropped downloads mapped new memory; want most of them to reuse a dropped one's", maps-maps0, loops)
		}
	})
}

// The memory of download arrays is outside Go's heap and the pool, so
// pool.status() has a line of its own for it: what live arrays hold, and
// what dropped ones left for the next downloads, with the most that is
// kept. A runtime that downloaded nothing into new arrays has no line.
func TestMemoryStatusShowsTheMemoryOfDownloadArrays(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		if s := rt.Status(); strings.Contains(s, "downloads") {
			t.Fatalf("before any download, the status has a line on their memory:\n%s", s)
		}
		a, err := rt.Zeros([]int{5 << 20}, runtime.Uint8)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Free()
		h, err := a.CopyToHost(nil)
		if err != nil {
			t.Fatal(err)
		}
		if live, _ := rt.DownloadBytes(); live == 0 {
			t.Skip("no anonymous mappings on this system")
		}
		want := "Host memory of downloads: 6.0 MiB in new host arrays, 0 B kept for the next ones (at most 2.0 GiB)"
		if s := rt.Status(); !strings.Contains(s, want) {
			t.Errorf("with a 5 MiB download array live, the status lacks %q:\n%s", want, s)
		}
		goruntime.KeepAlive(h)
		h = nil
		collectUntil(t, "the dropped download's memory is still held", func() bool {
			live, _ := rt.DownloadBytes()
			return live == 0
		})
		want = "Host memory of downloads: 0 B in new host arrays, 6.0 MiB kept for the next ones (at most 2.0 GiB)"
		if s := rt.Status(); !strings.Contains(s, want) {
			t.Errorf("once the array is dropped, the status lacks %q:\n%s", want, s)
		}
	})
}
