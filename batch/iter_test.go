package batch_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gluaproject/glua/batch"
	"github.com/gluaproject/glua/runtime"
)

// randomHost is a host array of fresh random values.
func randomHost(t *testing.T, rt *runtime.Runtime, shape []int, dt runtime.DType, pinned bool) *runtime.HostArray {
	t.Helper()
	h, err := rt.NewHostArray(shape, dt, pinned)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Size() {
		h.Set(i, float64(rand.IntN(1000))+0.25)
	}
	return h
}

// Every batch arrives once, in order, with its data, whatever the
// prefetch depth, whether its arrays are pinned and whether the source
// says they stay unchanged; at most the current
// batch and the prefetched ones are held, and nothing after the end.
func TestIterDeliversEveryBatchInOrder(t *testing.T) {
	for _, tc := range []struct {
		prefetch  int
		unchanged bool
	}{{0, false}, {1, false}, {3, false}, {0, true}, {1, true}, {3, true}} {
		prefetch := tc.prefetch
		rt := newRuntime(t, "")
		var want [][]*runtime.HostArray
		for i := range 7 {
			want = append(want, []*runtime.HostArray{
				randomHost(t, rt, []int{5, 3}, runtime.Float32, i%2 == 0),
				randomHost(t, rt, []int{4}, runtime.Int32, false),
			})
		}
		it, err := batch.NewIter(rt, batch.List(want), batch.Options{Prefetch: prefetch, Unchanged: tc.unchanged})
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		drain(t, it, func(i int, arrays []*runtime.Array) {
			seen++
			if i != seen || len(arrays) != 2 {
				t.Fatalf("prefetch %d: batch %d with %d arrays, want batch %d with 2", prefetch, i, len(arrays), seen)
			}
			for j, a := range arrays {
				got, err := a.Float64s()
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range want[i-1][j].Floats() {
					if got[k] != v {
						t.Fatalf("prefetch %d: batch %d array %d element %d is %v, want %v", prefetch, i, j+1, k, got[k], v)
					}
				}
			}
			if live, most := rt.LiveArrays(), 2*(prefetch+1); live > most {
				t.Fatalf("prefetch %d: %d arrays live, want at most %d", prefetch, live, most)
			}
		})
		if seen != 7 || rt.LiveArrays() != 0 {
			t.Fatalf("prefetch %d: %d batches seen, %d arrays live at the end", prefetch, seen, rt.LiveArrays())
		}
	}
}

// Closing early, a failing source and a batch over the hard limit free
// everything; the errors name the batch and its size.
func TestIterFreesEverythingOnCloseAndErrors(t *testing.T) {
	rt := newRuntime(t, "16MiB")
	small := func() []*runtime.HostArray {
		return []*runtime.HostArray{randomHost(t, rt, []int{256, 256}, runtime.Float32, false)}
	}
	it, _ := batch.NewIter(rt, batch.List([][]*runtime.HostArray{small(), small(), small(), small()}), batch.Options{Prefetch: 2})
	if _, _, _, err := it.Next(); err != nil {
		t.Fatal(err)
	}
	if err := it.Close(); err != nil || rt.LiveArrays() != 0 {
		t.Fatalf("after Close: %v, %d arrays live", err, rt.LiveArrays())
	}
	if _, _, _, err := it.Next(); err == nil {
		t.Fatal("Next after Close succeeded")
	}

	boom := errors.New("boom")
	n := 0
	failing := func() ([]*runtime.HostArray, error) {
		if n++; n == 3 {
			return nil, boom
		}
		return small(), nil
	}
	it, _ = batch.NewIter(rt, failing, batch.Options{Prefetch: 1})
	var err error
	for err == nil {
		_, _, _, err = it.Next()
	}
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "batch 3") || rt.LiveArrays() != 0 {
		t.Fatalf("a failing source: %v, %d arrays live", err, rt.LiveArrays())
	}

	big := []*runtime.HostArray{randomHost(t, rt, []int{1024, 1024, 8}, runtime.Float32, false)} // 32 MiB
	it, _ = batch.NewIter(rt, batch.List([][]*runtime.HostArray{small(), big}), batch.Options{Prefetch: 1})
	_, _, _, err = it.Next()
	if err == nil || !strings.Contains(err.Error(), "batch 2 (32 MiB in 1 array)") || rt.LiveArrays() != 0 {
		t.Fatalf("a batch over the hard limit: %v, %d arrays live", err, rt.LiveArrays())
	}
	if _, err := batch.NewIter(rt, batch.List(nil), batch.Options{Prefetch: -1}); err == nil {
		t.Fatal("a negative prefetch accepted")
	}
}

// A source function may fill the same host array for every batch, as a
// reader of a file does: each batch reaches the device as the source
// returned it, whatever the prefetch depth, because the iterator lets the
// previous batches' bytes be copied out before it calls the source again.
func TestIterSourceMayRefillOneArray(t *testing.T) {
	n := 3<<20 + 5 // float32s: several 2 MiB staging pieces
	if raceEnabled {
		n = 1<<20 + 5 // two whole pieces and a part of one
	}
	for _, prefetch := range []int{0, 1, 3} {
		rt := newRuntime(t, "")
		h, err := rt.NewHostArray([]int{n}, runtime.Float32, false)
		if err != nil {
			t.Fatal(err)
		}
		var want [][]float64
		source := func() ([]*runtime.HostArray, error) {
			if len(want) == 6 {
				return nil, nil
			}
			vals := make([]float64, n)
			base := float64(rand.IntN(1000) * 8)
			for i := range vals {
				vals[i] = base + float64(i%8)
				h.Set(i, vals[i])
			}
			want = append(want, vals)
			return []*runtime.HostArray{h}, nil
		}
		it, err := batch.NewIter(rt, source, batch.Options{Prefetch: prefetch})
		if err != nil {
			t.Fatal(err)
		}
		drain(t, it, func(i int, arrays []*runtime.Array) {
			got, err := arrays[0].Float64s()
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range want[i-1] {
				if got[k] != v {
					t.Fatalf("prefetch %d: batch %d element %d is %v, want %v", prefetch, i, k, got[k], v)
				}
			}
		})
	}
}

// drain calls body with each batch of it, to the end.
func drain(t *testing.T, it *batch.Iter, body func(i int, arrays []*runtime.Array)) {
	t.Helper()
	for {
		i, arrays, ok, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return
		}
		body(i, arrays)
	}
}
