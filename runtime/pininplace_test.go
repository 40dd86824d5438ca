package runtime_test

import (
	"bytes"
	"errors"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gluaproject/glua/cpu"
	"github.com/gluaproject/glua/runtime"
)

// A download's new array page-locked in place counts as pinned memory
// while it lives, and asynchronous copies take it both ways, its bytes
// exactly; asking again costs nothing more. Once it and its views are
// dropped its memory is unlocked and reused: the next download's array,
// on the same memory, locks again (the backend refuses to lock memory
// twice, so a lock left behind would fail it).
func TestADownloadArrayPinnedInPlaceCopiesAsynchronouslyUntilItDies(t *testing.T) {
	eachBackendWith(t, runtime.Options{}, func(t *testing.T, rt *runtime.Runtime) {
		const n = 6 << 20
		liveBefore, _, _ := rt.PinnedStats()
		src := make([]byte, n)
		fillRandom(src)
		a, err := rt.DeviceArray([]int{n}, runtime.Uint8)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Free()
		for round := range 2 {
			hsrc, _ := runtime.HostArrayOf(src, []int{n}, runtime.Uint8)
			if err := a.CopyFrom(hsrc); err != nil {
				t.Fatal(err)
			}
			h, err := a.CopyToHost(nil)
			if err != nil {
				t.Fatal(err)
			}
			p, ok := rt.PinInPlace(h)
			if !ok || !p.Pinned() {
				t.Fatalf("round %d: a download's new array of %d bytes was not page-locked in place", round, n)
			}
			live, _, _ := rt.PinnedStats()
			if live < liveBefore+n {
				t.Errorf("round %d: pinned memory in use went from %d to %d bytes, want %d more at least", round, liveBefore, live, n)
			}
			if s := rt.Status(); !strings.Contains(s, "(6.0 MiB of it host arrays page-locked in place)") {
				t.Errorf("round %d: pool.status() does not tell the array locked in place:\n%s", round, s)
			}
			if again, ok := rt.PinInPlace(h); !ok || !again.Pinned() {
				t.Errorf("round %d: the second PinInPlace of the same array failed", round)
			} else if live2, _, _ := rt.PinnedStats(); live2 != live {
				t.Errorf("round %d: the second PinInPlace counted again: %d bytes in use, was %d", round, live2, live)
			}
			// up from the locked memory and back into it, on the copy streams
			fillRandom(src)
			copy(p.Bytes(), src)
			b, err := rt.DeviceArray([]int{n}, runtime.Uint8)
			if err != nil {
				t.Fatal(err)
			}
			up, err := rt.CopyStream()
			if err != nil {
				t.Fatal(err)
			}
			if err := b.CopyFromAsync(p, up); err != nil {
				t.Fatalf("round %d: an upload from the array pinned in place: %v", round, err)
			}
			if err := up.Synchronize(); err != nil {
				t.Fatal(err)
			}
			clear(p.Bytes())
			down, err := rt.DownloadStream()
			if err != nil {
				t.Fatal(err)
			}
			if err := b.CopyToHostAsync(p, down); err != nil {
				t.Fatalf("round %d: a download into the array pinned in place: %v", round, err)
			}
			if err := down.Synchronize(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(h.Bytes(), src) {
				t.Fatalf("round %d: the round trip through the array pinned in place changed its bytes", round)
			}
			b.Free()
			goruntime.KeepAlive(h)
			h, p = nil, nil
			collectUntil(t, "the dropped array's memory is still page-locked", func() bool {
				rt.Synchronize() // the runtime unlocks dropped arrays' memory on its next call
				live, _, _ := rt.PinnedStats()
				return live == liveBefore
			})
		}
	})
}

// Only memory the runtime mapped for a download is locked in place: an
// ordinary host array is not, and neither is a download's array when
// [host] pinned_limit has no room for it; a pinned array already is.
func TestPinInPlaceRefusesWhatItCannotLockAndKeepsThePinned(t *testing.T) {
	eachBackendWith(t, runtime.Options{PinnedLimit: "4MiB"}, func(t *testing.T, rt *runtime.Runtime) {
		plain, err := rt.NewHostArray([]int{8 << 20}, runtime.Uint8, false)
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := rt.PinInPlace(plain); ok || p != plain || p.Pinned() {
			t.Errorf("an ordinary host array was page-locked in place (%v, %v)", ok, p.Pinned())
		}
		d, err := rt.Zeros([]int{8 << 20}, runtime.Uint8)
		if err != nil {
			t.Fatal(err)
		}
		h, err := d.CopyToHost(nil)
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := rt.PinInPlace(h); ok || p != h {
			t.Errorf("8 MiB were page-locked in place under a pinned limit of 4 MiB")
		}
		if live, _, _ := rt.PinnedStats(); live != 0 {
			t.Errorf("a refused PinInPlace left %d bytes counted as pinned", live)
		}
		pinned, err := rt.NewHostArray([]int{1024}, runtime.Float32, true)
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := rt.PinInPlace(pinned); !ok || p != pinned {
			t.Errorf("a pinned host array was not returned as it is")
		}
	})
}

// Closing the runtime unlocks memory locked in place whose array is still
// alive; the array keeps its bytes.
func TestCloseUnlocksADownloadArrayPinnedInPlaceThatStillLives(t *testing.T) {
	eachBackendWith(t, runtime.Options{}, func(t *testing.T, rt *runtime.Runtime) {
		d, err := rt.Full([]int{5 << 20}, 7, runtime.Uint8)
		if err != nil {
			t.Fatal(err)
		}
		h, err := d.CopyToHost(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := rt.PinInPlace(h); !ok {
			t.Fatal("a download's new array was not page-locked in place")
		}
		if err := rt.Close(); err != nil {
			t.Fatalf("Close with an array pinned in place alive: %v", err)
		}
		if b := h.Bytes(); b[0] != 7 || b[len(b)-1] != 7 {
			t.Errorf("after Close the array holds %d..%d, want 7s", b[0], b[len(b)-1])
		}
	})
}

// A result array from stagedMin bytes reuses the memory of a dropped
// download or result array as it is, mapping nothing new; a smaller one
// is an ordinary zeroed array. Bad shapes and dtypes are refused.
func TestAResultArrayReusesADroppedArraysMemory(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	small, err := rt.NewResultArray([]int{1000}, runtime.Float32)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range small.Floats() {
		if v != 0 {
			t.Fatalf("a small result array holds %v at %d, want zeros", v, i)
		}
	}
	first, err := rt.NewResultArray([]int{1024, 1536}, runtime.Float32) // 6 MiB
	if err != nil {
		t.Fatal(err)
	}
	fillRandom(first.Bytes())
	first = nil
	maps, _, _ := rt.DownloadCounts()
	collectUntil(t, "the dropped result array's memory is not cached", func() bool {
		_, cached := rt.DownloadBytes()
		return cached > 0
	})
	second, err := rt.NewResultArray([]int{1536, 1024}, runtime.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if again, _, _ := rt.DownloadCounts(); again != maps {
		t.Errorf("a result array the size of a dropped one mapped new memory (%d maps, was %d)", again, maps)
	}
	goruntime.KeepAlive(second)
	if _, err := rt.NewResultArray([]int{-1}, runtime.Float32); err == nil {
		t.Error("a result array of shape {-1} was made")
	}
	if _, err := rt.NewResultArray([]int{4}, runtime.DType(99)); err == nil {
		t.Error("a result array of an invalid dtype was made")
	}
}

// A loop of products that drops each result beside operands that live
// on reuses the dropped result's memory from the second call on: a large
// result the cache cannot serve collects before it maps fresh memory.
// (Without that, all twelve results here were fresh memory: the 96 MiB
// they take is under the pace of collections.)
func TestALoopOfResultArraysReusesTheDroppedOnes(t *testing.T) {
	defer runtime.SetCollectFirstMin(8 << 20)()
	rt := newCPU(t, runtime.Options{})
	d, err := rt.DeviceArray([]int{8 << 20}, runtime.Uint8)
	if err != nil {
		t.Fatal(err)
	}
	A, errA := d.CopyToHost(nil)
	B, errB := d.CopyToHost(nil)
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	maps0, _, _ := rt.DownloadCounts()
	const calls = 12
	for range calls {
		C, err := rt.NewResultArray([]int{1024, 8192}, runtime.Uint8)
		if err != nil {
			t.Fatal(err)
		}
		C.Bytes()[0] = 1
	}
	if maps, _, _ := rt.DownloadCounts(); maps-maps0 > 2 {
		t.Errorf("%d of %d dropped results mapped fresh memory, want 2 at most", maps-maps0, calls)
	}
	goruntime.KeepAlive(A)
	goruntime.KeepAlive(B)
}

// A large array is locked piece by piece from its start: ready answers
// for its first bytes, then for all of them; a copy inside a piece goes
// through, and one across a seam is refused, as the driver refuses it
// (CUDA_ERROR_INVALID_VALUE on an H200), with glua's message. Only a
// reader whose copies cannot cross the pieces finds the memory locked.
// Dropped, every piece is unlocked.
func TestAnArrayLockedAheadCopiesInsideItsPieces(t *testing.T) {
	eachBackendWith(t, runtime.Options{}, func(t *testing.T, rt *runtime.Runtime) {
		const n, piece = 160 << 20, 64 << 20 // pieces of 64, 64 and 32 MiB
		liveBefore, _, _ := rt.PinnedStats()
		d, err := rt.DeviceArray([]int{n}, runtime.Uint8)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Free()
		h, err := d.CopyToHost(nil)
		if err != nil {
			t.Fatal(err)
		}
		p, ready, ok := rt.PinInPlaceAhead(h, piece)
		if !ok {
			t.Fatal("a download's new array of 160 MiB was not locked ahead")
		}
		for _, upTo := range []int{1, piece, piece + 1, n} {
			if err := ready(upTo); err != nil {
				t.Fatalf("ready(%d): %v", upTo, err)
			}
		}
		s, err := rt.CopyStream()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			first, last int // bytes, 1-based, inclusive
			ok          bool
		}{
			{1, piece, true},
			{piece + 1, 2 * piece, true},
			{2*piece + 1, n, true},
			{piece - 4095, piece + 4096, false},
		} {
			part, err := p.Rows(c.first, c.last)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, part.NBytes())
			fillRandom(want)
			copy(part.Bytes(), want)
			dst, err := d.Rows(1, int(part.NBytes()))
			if err != nil {
				t.Fatal(err)
			}
			err = dst.CopyFromAsync(part, s)
			if !c.ok {
				if err == nil || !strings.Contains(err.Error(), "not pinned memory") {
					t.Errorf("bytes %d..%d, across a seam: %v, want a refusal", c.first, c.last, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("bytes %d..%d: %v", c.first, c.last, err)
			}
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
			got, err := dst.CopyToHost(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("bytes %d..%d changed on the way up", c.first, c.last)
			}
		}
		for _, c := range []struct {
			piece int
			ok    bool
		}{{piece, true}, {piece / 2, true}, {48 << 20, false}, {0, false}} {
			if _, ok := rt.PinnedInPlace(h, c.piece); ok != c.ok {
				t.Errorf("PinnedInPlace for copies of %d bytes: %v, want %v", c.piece, ok, c.ok)
			}
		}
		goruntime.KeepAlive(h)
		h, p = nil, nil
		collectUntil(t, "the dropped array's pieces are still page-locked", func() bool {
			rt.Synchronize()
			live, _, _ := rt.PinnedStats()
			return live == liveBefore
		})
	})
}

// failingRegister is the CPU backend whose page-locking in place fails
// from the failAt'th call on, as the driver's can (out of memory).
type failingRegister struct {
	*cpu.Backend
	calls, failAt int
	live          atomic.Int32
}

func (b *failingRegister) RegisterHost(buf []byte) error {
	if b.calls++; b.calls >= b.failAt {
		return errors.New("cpu: RegisterHost: out of memory (a test's)")
	}
	b.live.Add(1)
	return b.Backend.RegisterHost(buf)
}

func (b *failingRegister) UnregisterHost(buf []byte) error {
	b.live.Add(-1)
	return b.Backend.UnregisterHost(buf)
}

// When locking fails, PinInPlace gives the array back unpinned with
// nothing left locked or counted; locked ahead in pieces, ready says why
// for the bytes past the piece that failed, and the pieces locked before
// are unlocked when the array dies.
func TestPinInPlaceUndoesALockingThatFails(t *testing.T) {
	var fb *failingRegister
	rt := newCPUWith(t, func(b *cpu.Backend) runtime.Backend {
		fb = &failingRegister{Backend: b, failAt: 1}
		return fb
	})
	d, err := rt.DeviceArray([]int{160 << 20}, runtime.Uint8)
	if err != nil {
		t.Fatal(err)
	}
	h, err := d.CopyToHost(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := rt.PinInPlace(h); ok || p != h || p.Pinned() {
		t.Fatal("PinInPlace reported success where the locking failed")
	}
	if live, _, _ := rt.PinnedStats(); live != 0 || fb.live.Load() != 0 {
		t.Errorf("%d bytes counted as pinned, %d pieces locked after the locking failed", live, fb.live.Load())
	}
	fb.calls, fb.failAt = 0, 2 // the second piece fails
	_, ready, ok := rt.PinInPlaceAhead(h, 64<<20)
	if !ok {
		t.Fatal("locking ahead after a failure did not start")
	}
	if err := ready(64 << 20); err != nil {
		t.Errorf("the first piece: %v", err)
	}
	if err := ready(64<<20 + 1); err == nil || !strings.Contains(err.Error(), "out of memory (a test's)") {
		t.Errorf("past the piece that failed: %v, want its error", err)
	}
	goruntime.KeepAlive(h)
	h = nil
	collectUntil(t, "the pieces locked before the failure are still locked", func() bool {
		rt.Synchronize()
		live, _, _ := rt.PinnedStats()
		return live == 0 && fb.live.Load() == 0
	})
}

// Locked ahead, an array's pieces are page-locked as a reader asks for
// them, not all at once: the driver holds back the process's other calls
// while it locks. An array dropped before it was read through has only
// the pieces it reached locked, and those are unlocked.
func TestLockingAheadLocksWhatTheReaderAsksFor(t *testing.T) {
	var fb *failingRegister
	rt := newCPUWith(t, func(b *cpu.Backend) runtime.Backend {
		fb = &failingRegister{Backend: b, failAt: 1 << 30}
		return fb
	})
	const piece, pieces = 4 << 20, 8
	d, err := rt.DeviceArray([]int{piece * pieces}, runtime.Uint8)
	if err != nil {
		t.Fatal(err)
	}
	h, err := d.CopyToHost(nil)
	if err != nil {
		t.Fatal(err)
	}
	lockedNow := func(want int32) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); fb.live.Load() < want && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond) // time to go past want, if it would
		if got := fb.live.Load(); got != want {
			t.Fatalf("%d pieces locked, want %d", got, want)
		}
	}
	_, ready, ok := rt.PinInPlaceAhead(h, piece)
	if !ok {
		t.Fatal("a download's new array was not locked ahead")
	}
	lockedNow(0)
	if err := ready(1); err != nil {
		t.Fatal(err)
	}
	lockedNow(1)
	if err := ready(3*piece + 1); err != nil { // the fourth piece
		t.Fatal(err)
	}
	lockedNow(4)
	goruntime.KeepAlive(h)
	h = nil
	collectUntil(t, "the pieces locked before the array died are still locked", func() bool {
		rt.Synchronize()
		live, _, _ := rt.PinnedStats()
		return live == 0 && fb.live.Load() == 0
	})
}
