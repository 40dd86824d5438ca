package runtime_test

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gluaproject/glua/runtime"
)

// fillRandom fills b with random bytes in one call: a loop of rand.IntN
// per byte, or rand.Float64 per element, costs about 50 ns a byte under
// the race detector, which this file's tens of MiB of sources made a
// minute of its run.
func fillRandom(b []byte) {
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], rand.Uint64())
	rand.NewChaCha8(seed).Read(b)
}

// A Stager uploads pageable arrays of any size and dtype exactly: empty,
// one element, less than a piece, several pieces and a remainder. Each
// upload returns once the source has been copied out, so overwriting the
// source at once leaves the device's copy as it was; its slots grow for
// larger arrays, and Close gives their pinned memory back.
func TestStagerUploadsPageableArraysExactly(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		liveBefore, _, _ := rt.PinnedStats()
		s, err := rt.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		st := rt.NewStager(s)
		cases := []struct {
			dt runtime.DType
			n  int
		}{
			{runtime.Float32, 0}, {runtime.Float64, 1}, {runtime.Uint8, 4097},
			{runtime.Float32, 3<<19 + 5}, {runtime.Int32, 1 << 19}, {runtime.Float64, 7<<17 - 3},
		}
		type pending struct {
			a    *runtime.Array
			want []byte
		}
		var queued []pending
		for _, c := range cases {
			h, err := rt.NewHostArray([]int{c.n}, c.dt, false)
			if err != nil {
				t.Fatal(err)
			}
			for i := range c.n {
				h.Set(i, float64(rand.IntN(200)+1))
			}
			want := bytes.Clone(h.Bytes())
			a, err := rt.DeviceArray([]int{c.n}, c.dt)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Upload(a, h); err != nil {
				t.Fatalf("%s[%d]: %v", c.dt, c.n, err)
			}
			clear(h.Bytes())
			queued = append(queued, pending{a, want})
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		for i, p := range queued {
			got, err := p.a.CopyToHost(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), p.want) {
				t.Errorf("%s[%d]: the device's copy differs from the source", cases[i].dt, cases[i].n)
			}
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("closing twice: %v", err)
		}
		if live, _, _ := rt.PinnedStats(); live != liveBefore {
			t.Errorf("pinned bytes live after Close: %d, want %d", live, liveBefore)
		}
	})
}

// A pinned source is copied from directly, without slots.
func TestStagerCopiesPinnedArraysDirectly(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		h, err := rt.NewHostArray([]int{1000}, runtime.Float32, true)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 1000 {
			h.Set(i, rand.Float64())
		}
		liveBefore, _, _ := rt.PinnedStats()
		st := rt.NewStager(nil)
		defer st.Close()
		a, _ := rt.DeviceArray([]int{1000}, runtime.Float32)
		if err := st.Upload(a, h); err != nil {
			t.Fatal(err)
		}
		if live, _, _ := rt.PinnedStats(); live != liveBefore {
			t.Errorf("a pinned upload took %d pinned bytes of slots", live-liveBefore)
		}
		got, err := a.CopyToHost(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), h.Bytes()) {
			t.Error("the device's copy differs from the source")
		}
	})
}

// Bad uploads are refused before anything is copied, and the stager and
// the runtime go on working.
func TestStagerRefusesBadUploadsAndStaysUsable(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		st := rt.NewStager(nil)
		h, _ := rt.NewHostArray([]int{4, 4}, runtime.Float32, false)
		for i := range 16 {
			h.Set(i, float64(i+1))
		}
		wrongShape, _ := rt.DeviceArray([]int{16}, runtime.Float32)
		wrongType, _ := rt.DeviceArray([]int{4, 4}, runtime.Float64)
		freed, _ := rt.DeviceArray([]int{4, 4}, runtime.Float32)
		freed.Free()
		for _, c := range []struct {
			a    *runtime.Array
			h    *runtime.HostArray
			want string
		}{
			{wrongShape, h, "source is 4x4 but array is 16"}, {wrongType, h, "float64"}, {freed, h, "freed"}, {wrongShape, nil, "nil"},
		} {
			if err := st.Upload(c.a, c.h); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error about %q", err, c.want)
			}
		}
		good, _ := rt.DeviceArray([]int{4, 4}, runtime.Float32)
		if err := st.Upload(good, h); err != nil {
			t.Fatal(err)
		}
		got, err := good.CopyToHost(nil)
		if err != nil || !bytes.Equal(got.Bytes(), h.Bytes()) {
			t.Fatalf("after the refusals: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if err := st.Upload(good, h); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("upload after Close: %v", err)
		}
	})
}

// Queued uploads, pageable ones of several pieces, pinned ones behind
// them (one larger than a piece, behind 64 MiB that take a while to
// stage) and an empty one, land exactly, and each one's done event
// follows its copies.
func TestStagerQueuedUploadsLandInOrder(t *testing.T) {
	eachStagingBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		s, err := rt.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		st := rt.NewStager(s)
		defer st.Close()
		type pending struct {
			a    *runtime.Array
			h    *runtime.HostArray
			want []byte
			u    *runtime.Staged
			done *runtime.Event
		}
		var queued []pending
		for i, n := range []int{16 << 20, 3<<20 + 5, 5<<18 + 7, 3, 1 << 20, 0, 9<<17 + 1, 4096} {
			pinned := i%3 == 1
			h, err := rt.NewHostArray([]int{n}, runtime.Float32, pinned)
			if err != nil {
				t.Fatal(err)
			}
			fillRandom(h.Bytes())
			a, err := rt.DeviceArray([]int{n}, runtime.Float32)
			if err != nil {
				t.Fatal(err)
			}
			done, err := rt.NewEvent()
			if err != nil {
				t.Fatal(err)
			}
			queued = append(queued, pending{a, h, bytes.Clone(h.Bytes()), nil, done})
		}
		// Queued together, so that the later ones wait behind the first.
		for i := range queued {
			p := &queued[i]
			if p.u, err = st.Queue(p.a, p.h, nil, p.done); err != nil {
				t.Fatalf("queue %d: %v", i, err)
			}
		}
		for i, p := range queued {
			if err := p.u.Wait(); err != nil {
				t.Fatalf("upload %d: %v", i, err)
			}
			if err := p.done.Synchronize(); err != nil {
				t.Fatalf("upload %d's done event: %v", i, err)
			}
			got, err := p.a.CopyToHost(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), p.want) {
				t.Errorf("upload %d (%d bytes): the device's copy differs from the source", i, len(p.want))
			}
		}
	})
}

// Closing a stager with uploads still queued stops its threads without
// queueing more copies: the uploads not copied report it, the runtime
// stays usable, and no pinned memory stays in use.
func TestStagerClosedWithUploadsQueued(t *testing.T) {
	eachStagingBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		liveBefore, _, _ := rt.PinnedStats()
		s, _ := rt.NewStream()
		st := rt.NewStager(s)
		var us []*runtime.Staged
		for range 8 {
			h, _ := rt.NewHostArray([]int{3 << 20}, runtime.Float32, false)
			a, err := rt.DeviceArray([]int{3 << 20}, runtime.Float32)
			if err != nil {
				t.Fatal(err)
			}
			u, err := st.Queue(a, h, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			us = append(us, u)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		for _, u := range us {
			if err := u.Wait(); err != nil && !strings.Contains(err.Error(), "closed before") {
				t.Errorf("an upload cut short by Close: %v", err)
			}
		}
		if _, err := st.Queue(nil, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("queue after Close: %v", err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if live, _, _ := rt.PinnedStats(); live != liveBefore {
			t.Errorf("pinned bytes live after Close: %d, want %d", live, liveBefore)
		}
		h, _ := rt.NewHostArray([]int{5 << 20}, runtime.Float32, false)
		for j := range 5 << 20 {
			h.Set(j, float64(j%1000+1))
		}
		a, err := rt.ToDevice(h)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := a.CopyToHost(nil); err != nil || !bytes.Equal(got.Bytes(), h.Bytes()) {
			t.Fatalf("an upload after the stager closed: %v", err)
		}
	})
}

// eachStagingBackend is eachBackend with the CPU backend's page-locked
// memory stood in for, so that staging runs as it does on a GPU.
func eachStagingBackend(t *testing.T, f func(t *testing.T, rt *runtime.Runtime)) {
	t.Run("pinned-cpu", func(t *testing.T) {
		rt, _ := newPinnedCPU(t, runtime.Options{})
		f(t, rt)
	})
	eachBackend(t, f)
}

// A runtime closed under a stager that was never closed, with uploads
// still queued, ends the stager's threads: an embedding program that
// makes runtime after runtime keeps no goroutines of theirs.
func TestRuntimeCloseEndsAStagersThreads(t *testing.T) {
	before := goruntime.NumGoroutine()
	rt, _ := newPinnedCPU(t, runtime.Options{})
	st := rt.NewStager(nil)
	for range 4 {
		h, _ := rt.NewHostArray([]int{3 << 20}, runtime.Float32, false)
		a, err := rt.DeviceArray([]int{3 << 20}, runtime.Float32)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Queue(a, h, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if goruntime.NumGoroutine() <= before {
		t.Fatal("the stager started no threads")
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	// Other goroutines of a runtime, such as its cleanups', may take a
	// moment to end; a stager's sixteen would stay for good.
	deadline := time.Now().Add(2 * time.Second)
	for goruntime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := goruntime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after the runtime closed, %d before it opened", n, before)
	}
	if err := st.Close(); err != nil {
		t.Errorf("closing the stager after its runtime: %v", err)
	}
}

// Uploads of random sizes, pageable and pinned, some empty, some large
// enough to grow the stager's threads and slots while others are queued,
// land exactly; a stager closed right after queueing them leaves every
// upload either copied or reporting the close, and nothing pinned in use.
func TestStagerRandomUploads(t *testing.T) {
	eachStagingBackend(t, randomUploads)
}

func randomUploads(t *testing.T, rt *runtime.Runtime) {
	liveBefore, _, _ := rt.PinnedStats()
	for round := range 20 {
		st := rt.NewStager(nil)
		type pending struct {
			a    *runtime.Array
			h    *runtime.HostArray
			want []byte
			u    *runtime.Staged
		}
		var queued []pending
		for range 1 + rand.IntN(12) {
			n := []int{0, 1, 1000, 1<<19 + rand.IntN(1<<19), 1<<20 + rand.IntN(7<<20)}[rand.IntN(5)]
			h, err := rt.NewHostArray([]int{n}, runtime.Uint8, rand.IntN(4) == 0)
			if err != nil {
				t.Fatal(err)
			}
			fillRandom(h.Bytes())
			a, err := rt.DeviceArray([]int{n}, runtime.Uint8)
			if err != nil {
				t.Fatal(err)
			}
			queued = append(queued, pending{a, h, bytes.Clone(h.Bytes()), nil})
		}
		// Queued together, so that they wait behind each other.
		for i := range queued {
			p := &queued[i]
			var err error
			if p.u, err = st.Queue(p.a, p.h, nil, nil); err != nil {
				t.Fatalf("round %d, upload %d of %d bytes: %v", round, i, len(p.want), err)
			}
		}
		closed := round%2 == 1
		if closed {
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		}
		for i, p := range queued {
			err := p.u.Wait()
			if err != nil {
				if closed && strings.Contains(err.Error(), "closed before") {
					rt.ReleasePinned(p.h) // never to be read
					continue
				}
				t.Fatalf("round %d, upload %d: %v", round, i, err)
			}
			got, err := p.a.CopyToHost(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), p.want) {
				t.Fatalf("round %d, upload %d (%d bytes): the device's copy differs", round, i, len(p.want))
			}
			rt.ReleasePinned(p.h) // read: the download above came after the copy on the same stream
			p.a.Free()
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if live, _, _ := rt.PinnedStats(); live != liveBefore {
		t.Errorf("pinned bytes live after the stagers closed and the sources were released: %d, want %d", live, liveBefore)
	}
}

func TestStagingLeavesProcessorsToTheRest(t *testing.T) {
	for procs, want := range map[int]int{1: 1, 2: 2, 3: 3, 4: 3, 8: 6, 16: 12, 64: 48} {
		if got := runtime.StageThreads(procs); got != want {
			t.Errorf("StageThreads(%d) = %d, want %d", procs, got, want)
		}
	}
	// A copy of many pieces takes no more threads than that.
	if threads, _ := runtime.StageLayout(1 << 40); threads != runtime.StageThreads(goruntime.GOMAXPROCS(0)) {
		t.Errorf("layout of 1 TiB: %d threads, want %d", threads, runtime.StageThreads(goruntime.GOMAXPROCS(0)))
	}
}

// Between uploads a stager's threads spin a moment for the next one, and
// then sleep: a stager left idle, as an iterator between loops is, takes
// no processor time.
func TestIdleStagerThreadsSleep(t *testing.T) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(8)) // threads to spare, so they spin
	rt, _ := newPinnedCPU(t, runtime.Options{})
	st := rt.NewStager(nil)
	defer st.Close()
	h, _ := rt.NewHostArray([]int{8 << 20}, runtime.Float32, false)
	a, err := rt.DeviceArray([]int{8 << 20}, runtime.Float32)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := st.Upload(a, h); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // past the spin
		before := processorTime(t)
		time.Sleep(200 * time.Millisecond)
		if used := processorTime(t) - before; used > 50*time.Millisecond {
			t.Fatalf("an idle stager's process used %v of processor time in 200ms", used)
		}
	}
}

func processorTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A stream of uploads queued behind each other goes up in copies of two
// pieces, all but the last upload, whose last pieces would otherwise come
// later; a synchronous upload, alone, goes up a piece at a time through
// slots of a piece.
func TestStagerPairsPiecesWhileUploadsQueueBehind(t *testing.T) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(4))
	threads := runtime.StageThreads(4)
	const piece, pieces, uploads = 2 << 20, 8, 3
	rt, b := newPinnedCPU(t, runtime.Options{})
	b.gate = make(chan struct{}) // the threads' first pieces wait while the rest are queued
	st := rt.NewStager(nil)
	defer st.Close()
	type pending struct {
		a    *runtime.Array
		want []byte
		u    *runtime.Staged
	}
	var queued []pending
	for i := range uploads {
		h, err := rt.NewHostArray([]int{pieces * piece}, runtime.Uint8, false)
		if err != nil {
			t.Fatal(err)
		}
		fillRandom(h.Bytes())
		a, err := rt.DeviceArray([]int{pieces * piece}, runtime.Uint8)
		if err != nil {
			t.Fatal(err)
		}
		u, err := st.Queue(a, h, nil, nil)
		if err != nil {
			t.Fatalf("queue %d: %v", i, err)
		}
		queued = append(queued, pending{a, bytes.Clone(h.Bytes()), u})
	}
	close(b.gate)
	for i, p := range queued {
		if err := p.u.Wait(); err != nil {
			t.Fatalf("upload %d: %v", i, err)
		}
		got, err := p.a.CopyToHost(nil)
		if err != nil || !bytes.Equal(got.Bytes(), p.want) {
			t.Fatalf("upload %d: the device's copy differs (%v)", i, err)
		}
	}
	// At most each thread's first piece went up alone before the queue
	// filled, and the last upload's pieces go up alone.
	if copies, most := b.asyncUploads.Load(), int64(threads+(uploads-1)*pieces/2+pieces); copies > most {
		t.Errorf("%d uploads of %d pieces queued together went up in %d copies, want at most %d", uploads, pieces, copies, most)
	}

	b.asyncUploads.Store(0)
	h, err := rt.NewHostArray([]int{pieces * piece}, runtime.Uint8, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.ToDevice(h); err != nil {
		t.Fatal(err)
	}
	if copies := b.asyncUploads.Load(); copies != pieces {
		t.Errorf("a synchronous upload of %d pieces went up in %d copies, want %d", pieces, copies, pieces)
	}
	// The stream's stager still holds its slots: the cache holds the
	// synchronous upload's alone.
	if _, cached, _ := rt.PinnedStats(); cached != uint64(threads*2*piece) {
		t.Errorf("a synchronous upload left %d pinned bytes cached, want %d (%d threads' two slots of a piece)",
			cached, threads*2*piece, threads)
	}
}
