package cpu

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

func TestAllocationsAreAlignedDistinctAndNeverReused(t *testing.T) {
	b := newTestBackend(t)
	type span struct {
		p device.Ptr
		n uint64
	}
	var live []span
	seen := map[device.Ptr]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		if len(live) > 0 && rng.IntN(3) == 0 {
			k := rng.IntN(len(live))
			if err := b.Free(live[k].p, live[k].n); err != nil {
				t.Fatal(err)
			}
			live = append(live[:k], live[k+1:]...)
			continue
		}
		n := uint64(1 + rng.IntN(5000))
		p, err := b.Alloc(n)
		if err != nil {
			t.Fatal(err)
		}
		if p == 0 || p%256 != 0 {
			t.Fatalf("Alloc(%d) = %#x, want a non-zero multiple of 256", n, p)
		}
		if seen[p] {
			t.Fatalf("Alloc(%d) reused address %#x", n, p)
		}
		seen[p] = true
		for _, o := range live {
			if p < o.p+device.Ptr(o.n) && o.p < p+device.Ptr(n) {
				t.Fatalf("allocation %#x+%d overlaps %#x+%d", p, n, o.p, o.n)
			}
		}
		live = append(live, span{p, n})
	}
}

func TestMemInfoCountsLiveBytes(t *testing.T) {
	b := newTestBackend(t)
	p1, _ := b.Alloc(1000)
	p2, _ := b.Alloc(3 << 20)
	free, total, err := b.MemInfo()
	if err != nil || total != testCapacity || free != testCapacity-1000-3<<20 {
		t.Fatalf("MemInfo() = %d, %d, %v; want %d, %d", free, total, err, testCapacity-1000-3<<20, testCapacity)
	}
	b.Free(p1, 1000)
	b.Free(p2, 3<<20)
	if free, _, _ := b.MemInfo(); free != testCapacity {
		t.Fatalf("free after freeing everything = %d, want %d", free, testCapacity)
	}
}

func TestAllocBeyondCapacityIsOutOfMemoryAndSaysWhy(t *testing.T) {
	b := newTestBackend(t)
	if _, err := b.Alloc(48 << 20); err != nil {
		t.Fatal(err)
	}
	_, err := b.Alloc(32 << 20)
	if !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("Alloc beyond capacity: %v, want device.ErrOutOfMemory", err)
	}
	for _, want := range []string{"alloc", "32 MiB", "16 MiB free", "64 MiB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The failure leaves the backend usable: what does fit still fits.
	if _, err := b.Alloc(16 << 20); err != nil {
		t.Fatalf("Alloc of exactly the free memory after an OOM: %v", err)
	}
}

func TestAllocOfZeroBytesIsAnError(t *testing.T) {
	b := newTestBackend(t)
	if _, err := b.Alloc(0); err == nil || errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("Alloc(0) = %v, want a non-OOM error", err)
	}
}

func TestFreeOfBadPointerOrSizeIsAnError(t *testing.T) {
	b := newTestBackend(t)
	p, _ := b.Alloc(1024)
	for _, tc := range []struct {
		name string
		p    device.Ptr
		n    uint64
		want string
	}{
		{"unknown", 12345, 1024, "not a live allocation"},
		{"interior", p + 256, 768, "inside the allocation"},
		{"wrong size", p, 1000, "allocated with 1024 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := b.Free(tc.p, tc.n)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Free(%#x, %d) = %v, want an error containing %q", tc.p, tc.n, err, tc.want)
			}
		})
	}
	if err := b.Free(p, 1024); err != nil {
		t.Fatal(err)
	}
	if err := b.Free(p, 1024); err == nil {
		t.Fatal("freeing twice succeeded")
	}
}

func TestBytesViewsIntoTheMiddleOfAnAllocation(t *testing.T) {
	b := newTestBackend(t)
	var ps []device.Ptr
	for i := 0; i < 20; i++ {
		p, err := b.Alloc(1000)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	p := ps[7]
	whole := b.Bytes(p, 1000)
	for i := range whole {
		whole[i] = byte(i * 7)
	}
	v := b.Bytes(p+100, 50)
	if len(v) != 50 || v[0] != byte(700%256) || v[49] != byte(149*7%256) {
		t.Fatalf("Bytes(p+100, 50) does not see the allocation's bytes at offset 100")
	}
	v[0] = 1
	if whole[100] != 1 {
		t.Fatal("a view does not share memory with its allocation")
	}
	if cap(v) != 50 {
		t.Fatalf("cap of a view = %d; appending to it would overwrite its neighbour", cap(v))
	}
	if e := b.Bytes(p+1000, 0); e == nil || len(e) != 0 {
		t.Fatalf("empty view at the end of an allocation = %v, want empty non-nil", e)
	}
}

func TestBytesOutsideOneLiveAllocationIsNil(t *testing.T) {
	b := newTestBackend(t)
	p, _ := b.Alloc(1000)
	q, _ := b.Alloc(1000)
	gone, _ := b.Alloc(1000)
	b.Free(gone, 1000)
	for _, tc := range []struct {
		name string
		p    device.Ptr
		n    uint64
	}{
		{"before the first", p - 1, 1},
		{"past the end", p + 900, 101},
		{"in the alignment gap", p + 1000, 1},
		{"spanning two allocations", p + 500, uint64(q - p)},
		{"freed", gone, 1},
		{"zero", 0, 0},
		{"huge length wraps", p + 10, ^uint64(0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v := b.Bytes(tc.p, tc.n); v != nil {
				t.Fatalf("Bytes(%#x, %d) = %d bytes, want nil", tc.p, tc.n, len(v))
			}
		})
	}
}

func TestSmallAllocationsAreAlignedForFloat64(t *testing.T) {
	b := newTestBackend(t)
	for n := uint64(1); n < 100; n++ {
		p, _ := b.Alloc(n)
		v := b.Bytes(p, n)
		if addr := uintptr(unsafe.Pointer(&v[0])); addr%8 != 0 {
			t.Fatalf("Alloc(%d) host memory at %#x is not 8-byte aligned", n, addr)
		}
	}
}

func TestConcurrentUseKeepsAccountsStraight(t *testing.T) {
	b := newTestBackend(t)
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func(g int) {
			rng := rand.New(rand.NewPCG(uint64(g), 99))
			for i := 0; i < 200; i++ {
				n := uint64(1 + rng.IntN(1<<14))
				p, err := b.Alloc(n)
				if err != nil {
					errs <- err
					return
				}
				data := randomBytes(rng, int(n))
				got := make([]byte, n)
				if err := b.Upload(p, data, 0); err != nil {
					errs <- err
					return
				}
				if err := b.Download(got, p, 0); err != nil {
					errs <- err
					return
				}
				if string(got) != string(data) {
					errs <- errors.New("a concurrent round trip returned other bytes")
					return
				}
				if err := b.Free(p, n); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(g)
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if free, total, _ := b.MemInfo(); free != total {
		t.Fatalf("after every goroutine freed what it took, free = %d of %d", free, total)
	}
}

func TestLargeAllocationsAreMappedAndGivenBackAtFree(t *testing.T) {
	b := newTestBackend(t)
	const n = 8 << 20
	p, err := b.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := b.live.Get(&allocation{base: p})
	if a == nil || !a.mapped {
		t.Fatalf("allocation of %d bytes: %+v", n, a)
	}
	v := b.Bytes(p, n)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 1000; i++ {
		k := rng.IntN(n)
		if v[k] != 0 {
			t.Fatalf("byte %d of a new allocation is %d, want 0", k, v[k])
		}
		v[k] = byte(rng.IntN(255) + 1)
	}
	if err := b.Free(p, n); err != nil {
		t.Fatal(err)
	}
	if a.mapped || b.Bytes(p, n) != nil {
		t.Fatal("the memory is still mapped or reachable after Free")
	}
	// Close gives back what the owner left.
	q, _ := b.Alloc(n)
	left, _ := b.live.Get(&allocation{base: q})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if left.mapped || b.live.Len() != 0 {
		t.Fatal("Close left an allocation mapped")
	}
}
