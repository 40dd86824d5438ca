package runtime_test

import (
	"errors"
	"math"
	"math/rand/v2"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// randomArray is a device array of n uniform random float32 values and
// the same values on the host.
func randomArray(t *testing.T, rt *runtime.Runtime, n int) (*runtime.Array, []float64) {
	t.Helper()
	h, err := rt.NewHostArray([]int{n}, runtime.Float32, false)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, n)
	for i := range want {
		h.Set(i, rand.Float64()+0.5)
		want[i], _ = h.Get(i)
	}
	a, err := rt.ToDevice(h)
	if err != nil {
		t.Fatal(err)
	}
	return a, want
}

func values(t *testing.T, a *runtime.Array) []float64 {
	t.Helper()
	v, err := a.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A graph of in-place steps runs nothing at capture and everything at
// each launch: y = (y + x)·2 three launches over, each step a kernel, an
// array made inside the capture holding a copy of y after each launch.
func TestGraphReplaysItsWorkAtEachLaunch(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		const n = 1000
		x, xs := randomArray(t, rt, n)
		y, ys := randomArray(t, rt, n)
		var snap *runtime.Array
		g, err := rt.Capture(func() error {
			if err := rt.Add(y, x); err != nil {
				return err
			}
			if err := rt.Scale(y, 2); err != nil {
				return err
			}
			var err error
			snap, err = y.Clone()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Free()
		if got := values(t, y); got[0] != ys[0] {
			t.Fatalf("the capture ran the work: y[0] = %v, was %v", got[0], ys[0])
		}
		for range 3 {
			if err := g.Launch(); err != nil {
				t.Fatal(err)
			}
			for i := range ys {
				ys[i] = float64(float32(float32(ys[i]+xs[i]) * 2))
			}
		}
		got, copied := values(t, y), values(t, snap)
		for i := range ys {
			if got[i] != ys[i] || copied[i] != ys[i] {
				t.Fatalf("y[%d] = %v, its copy %v, want %v", i, got[i], copied[i], ys[i])
			}
		}
		if g.Replays() || g.Nodes() < 3 {
			t.Errorf("on %s the graph should be a recording of 3 operations or more: replays %v, %d nodes", rt.BackendName(), g.Replays(), g.Nodes())
		}
	})
}

// A matmul recorded in a graph replays through cuBLAS: C = A·B.
func TestGraphRecordsMatmul(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		const n = 64
		a, av := randomArray(t, rt, n*n)
		b, bv := randomArray(t, rt, n*n)
		A, _ := a.Reshape([]int{n, n})
		B, _ := b.Reshape([]int{n, n})
		C, err := rt.Zeros([]int{n, n}, runtime.Float32)
		if err != nil {
			t.Fatal(err)
		}
		g, err := rt.Capture(func() error { return rt.Matmul(C, A, B, runtime.MatmulOptions{}) })
		if err != nil {
			t.Fatal(err)
		}
		defer g.Free()
		if got := values(t, C); got[0] != 0 || got[n*n-1] != 0 {
			t.Fatalf("the capture ran the product: C[1][1] = %v", got[0])
		}
		if err := g.Launch(); err != nil {
			t.Fatal(err)
		}
		got := values(t, C)
		for i := 0; i < n; i += 7 {
			for j := 0; j < n; j += 5 {
				var want float64
				for k := range n {
					want += av[i*n+k] * bv[k*n+j]
				}
				if math.Abs(got[i*n+j]-want) > 1e-2*math.Abs(want) {
					t.Fatalf("C[%d][%d] = %v, want %v", i, j, got[i*n+j], want)
				}
			}
		}
	})
}

// Work a graph cannot hold is refused inside the capture with an error
// that says why; the runtime, its arrays and later captures are fine.
func TestGraphRefusesWorkThatWaitsOrReadsTheHost(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		x, xs := randomArray(t, rt, 100)
		h, _ := rt.NewHostArray([]int{100}, runtime.Float32, false)
		cases := map[string]func() error{
			"synchronizing":             rt.Synchronize,
			"a reduction to a number":   func() error { _, err := rt.Sum(x); return err },
			"a copy to the host":        func() error { _, err := x.CopyToHost(nil); return err },
			"a copy from the host":      func() error { return x.CopyFrom(h) },
			"a copy from the host (to)": func() error { _, err := rt.ToDevice(h); return err },
			"element":                   func() error { _, err := x.Get(3); return err },
		}
		for name, work := range cases {
			g, err := rt.Capture(func() error {
				if err := rt.Scale(x, 3); err != nil {
					return err
				}
				return work()
			})
			var ce *device.CaptureError
			if g != nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), "cannot be captured in a graph") {
				t.Fatalf("%s: got %v, want a capture error at the capture", name, err)
			}
		}
		got := values(t, x)
		for i := range xs {
			if got[i] != xs[i] {
				t.Fatalf("x[%d] = %v after the refused captures, want %v", i, got[i], xs[i])
			}
		}
		g, err := rt.Capture(func() error { return rt.Scale(x, 2) })
		if err != nil {
			t.Fatalf("a capture after the refusals: %v", err)
		}
		if err := g.Launch(); err != nil {
			t.Fatal(err)
		}
		got = values(t, x)
		if want := float64(float32(xs[5] * 2)); got[5] != want {
			t.Fatalf("x[5] = %v after the launch, want %v", got[5], want)
		}
		g.Free()
	})
}

// The memory of arrays a graph uses stays the graph's until it is freed,
// even when the arrays are freed first; the pool's status says so.
func TestGraphKeepsTheMemoryItsWorkUses(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		x, _ := randomArray(t, rt, 1<<20)
		var tmp *runtime.Array
		g, err := rt.Capture(func() error {
			var err error
			if tmp, err = x.Clone(); err != nil {
				return err
			}
			return rt.Scale(tmp, 2)
		})
		if err != nil {
			t.Fatal(err)
		}
		used := rt.Stats().Used
		if err := tmp.Free(); err != nil {
			t.Fatal(err)
		}
		if after := rt.Stats().Used; after != used {
			t.Errorf("freeing an array the graph uses changed the pool's use from %d to %d", used, after)
		}
		if s := rt.Status(); !strings.Contains(s, "kept by graphs") || !strings.Contains(s, "Graphs: 1 graph") {
			t.Errorf("status does not show the graph's memory:\n%s", s)
		}
		if err := g.Launch(); err != nil { // still safe: the memory is the graph's
			t.Fatal(err)
		}
		if err := g.Free(); err != nil {
			t.Fatal(err)
		}
		if err := rt.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if after := rt.Stats().Used; after != used-4<<20 {
			t.Errorf("after the graph's free the pool holds %d, want %d", after, used-4<<20)
		}
		if err := g.Launch(); err == nil || !strings.Contains(err.Error(), "freed graph") {
			t.Errorf("launch after free: %v", err)
		}
	})
}

// An error in the function ends the capture; nesting is refused.
func TestGraphCaptureErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		boom := errors.New("boom")
		if _, err := rt.Capture(func() error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("got %v, want the function's error", err)
		}
		var inner error
		g, err := rt.Capture(func() error {
			_, inner = rt.Capture(func() error { return nil })
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Launch(); err != nil {
			t.Fatal(err)
		}
		if inner == nil || !strings.Contains(inner.Error(), "do not nest") {
			t.Fatalf("nested capture: %v", inner)
		}
		g.Free()
		x, _ := randomArray(t, rt, 10)
		if _, err := rt.Sum(x); err != nil {
			t.Fatalf("the runtime after the failed captures: %v", err)
		}
	})
}

// A graph the program drops is freed by the garbage collector, with the
// memory it kept for arrays freed since its capture.
func TestGraphDroppedIsCollected(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		x, _ := randomArray(t, rt, 1<<18)
		// The first capture makes the capture stream's cuBLAS workspace,
		// which stays with the runtime: the baseline comes after it.
		warm, err := rt.Capture(func() error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		warm.Free()
		before := rt.Stats().Used
		func() {
			var tmp *runtime.Array
			g, err := rt.Capture(func() error {
				var err error
				tmp, err = x.Clone()
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Launch(); err != nil {
				t.Fatal(err)
			}
			tmp.Free()
		}()
		if rt.Stats().Used == before {
			t.Fatal("the graph kept nothing for the freed array")
		}
		deadline := time.Now().Add(5 * time.Second)
		for rt.Stats().Used != before {
			if time.Now().After(deadline) {
				t.Fatalf("the pool holds %d bytes after the graph was dropped, want %d:\n%s", rt.Stats().Used, before, rt.Status())
			}
			goruntime.GC()
			if err := rt.Synchronize(); err != nil { // drains what the collector queued
				t.Fatal(err)
			}
		}
		if n, _, _ := rt.GraphMemory(); n != 0 {
			t.Errorf("%d graphs live after the collection", n)
		}
	})
}
