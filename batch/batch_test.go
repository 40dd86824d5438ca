package batch_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gluaproject/glua/batch"
	"github.com/gluaproject/glua/config"
	_ "github.com/gluaproject/glua/cpu"
	"github.com/gluaproject/glua/runtime"
)

func newRuntime(t *testing.T, hard string) *runtime.Runtime {
	t.Helper()
	c := config.Default()
	rt, err := runtime.New(runtime.Options{Config: &c, Backend: "cpu", CPUMemory: "1GiB", HardLimit: hard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func TestFindSizeHalvesOnlyOnOutOfMemory(t *testing.T) {
	rt := newRuntime(t, "32MiB")
	var tried []int
	n, err := batch.FindSize(rt, 100, 1, func(n int) ([]*runtime.Array, error) {
		tried = append(tried, n)
		a, err := rt.Zeros([]int{n, 1 << 18}, runtime.Float32) // n MiB
		if err != nil {
			return nil, err
		}
		scratch, err := rt.Zeros([]int{1 << 10}, runtime.Float32)
		if err != nil {
			return nil, err
		}
		_ = scratch
		return []*runtime.Array{a}, nil
	})
	if err != nil || n != 25 || !slices.Equal(tried, []int{100, 50, 25}) {
		t.Fatalf("FindSize = %d, %v after trying %v; want 25 after 100, 50, 25", n, err, tried)
	}
	if live := rt.LiveArrays(); live != 1 {
		t.Fatalf("%d arrays live, want only the one fn kept", live)
	}

	boom := errors.New("boom")
	calls := 0
	if _, err := batch.FindSize(rt, 64, 1, func(int) ([]*runtime.Array, error) { calls++; return nil, boom }); !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("another error: %v after %d calls, want boom after 1", err, calls)
	}
	_, err = batch.FindSize(rt, 8, 2, func(n int) ([]*runtime.Array, error) {
		_, err := rt.Zeros([]int{n * 64, 1 << 18}, runtime.Float32)
		return nil, err
	})
	if err == nil || !strings.Contains(err.Error(), "no size from 8 down to 2 fits (tried [8 4 2])") {
		t.Fatalf("nothing fits: %v", err)
	}
	for _, bad := range [][2]int{{0, 1}, {4, 0}, {4, 5}} {
		if _, err := batch.FindSize(rt, bad[0], bad[1], nil); err == nil {
			t.Fatalf("start %d, min %d accepted", bad[0], bad[1])
		}
	}
}

func TestChunksCoverEveryRowOnce(t *testing.T) {
	h, err := runtime.NewHostArray([]int{7, 3}, runtime.Float64)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Size() {
		h.Set(i, float64(i)+0.5)
	}
	for rows := 1; rows <= 8; rows++ {
		chunks, err := batch.Chunks(h, rows)
		if err != nil {
			t.Fatal(err)
		}
		var seen []float64
		for _, c := range chunks {
			seen = append(seen, c.Floats()...)
		}
		if !slices.Equal(seen, h.Floats()) || len(chunks) != (7+rows-1)/rows {
			t.Fatalf("rows %d: %d chunks covering %v", rows, len(chunks), seen)
		}
	}
	if _, err := batch.Chunks(h, 0); err == nil {
		t.Fatal("rows 0 accepted")
	}
}
