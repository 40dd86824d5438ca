package cpu

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gluaproject/glua/device"
)

// TestRuntimesSharingABackendDoNotDisturbEachOther drives one Backend from
// several goroutines as runtimes sharing it do: each with its own stream
// and events, its own slice of one allocation (as a pool's segment is cut
// into blocks for different runtimes) and allocations of its own, running
// transfers, memsets and matrix products at once. Run it with -race.
func TestRuntimesSharingABackendDoNotDisturbEachOther(t *testing.T) {
	b := newTestBackend(t)
	const workers, slice = 6, 64 << 10
	segment, err := b.Alloc(workers * slice)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- shareWorker(b, w, segment+device.Ptr(w*slice), slice)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if err := b.Free(segment, workers*slice); err != nil {
		t.Fatal(err)
	}
	if free, total, _ := b.MemInfo(); free != total {
		t.Fatalf("after every worker freed what it took, free = %d of %d", free, total)
	}
}

func shareWorker(b *Backend, w int, mine device.Ptr, n uint64) error {
	rng := rand.New(rand.NewPCG(uint64(w), 7))
	s, err := b.NewStream()
	if err != nil {
		return err
	}
	start, _ := b.NewTimingEvent()
	end, _ := b.NewTimingEvent()
	const dim = 24 // float32 matrices of dim×dim
	mat := uint64(dim * dim * 4)
	for i := 0; i < 60; i++ {
		if err := b.Record(start, s); err != nil {
			return err
		}
		// The worker's slice of the shared allocation: memset, upload over
		// half of it, copy within it, read it all back.
		fill := byte(w*16 + i%16)
		if err := b.Memset(mine, fill, n, s); err != nil {
			return err
		}
		data := randomBytes(rng, int(n/2))
		if err := b.Upload(mine, data, s); err != nil {
			return err
		}
		if err := b.Copy(mine+device.Ptr(n/2), mine, n/4, s); err != nil {
			return err
		}
		got := make([]byte, n)
		if err := b.Download(got, mine, s); err != nil {
			return err
		}
		for j := range got {
			want := fill
			switch {
			case uint64(j) < n/2:
				want = data[j]
			case uint64(j) < n/2+n/4:
				want = data[uint64(j)-n/2]
			}
			if got[j] != want {
				return fmt.Errorf("worker %d: byte %d of its slice is %#x, want %#x: another worker's call reached it", w, j, got[j], want)
			}
		}
		// A product on allocations of its own: ones·ones = dim.
		a, err := b.Alloc(3 * mat)
		if err != nil {
			return err
		}
		if err := b.Upload(a, onesFloat32(2*dim*dim), s); err != nil {
			return err
		}
		err = b.Gemm(device.Gemm{DType: device.Float32, M: dim, N: dim, K: dim, Alpha: 1,
			A: a, LDA: dim, B: a + device.Ptr(mat), LDB: dim, C: a + device.Ptr(2*mat), LDC: dim, Stream: s})
		if err != nil {
			return err
		}
		c := make([]byte, mat)
		if err := b.Download(c, a+device.Ptr(2*mat), s); err != nil {
			return err
		}
		if v := float32s(c)[rng.IntN(dim*dim)]; v != dim {
			return fmt.Errorf("worker %d: product element %v, want %d", w, v, dim)
		}
		if err := b.Free(a, 3*mat); err != nil {
			return err
		}
		if err := b.Record(end, s); err != nil {
			return err
		}
		if _, err := b.Elapsed(start, end); err != nil {
			return err
		}
	}
	for _, e := range []device.Event{start, end} {
		if err := b.DestroyEvent(e); err != nil {
			return err
		}
	}
	return b.DestroyStream(s)
}

func onesFloat32(n int) []byte {
	buf := make([]byte, 4*n)
	v := float32s(buf)
	for i := range v {
		v[i] = 1
	}
	return buf
}
