package runtime_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/jit"
	"github.com/gluaproject/glua/runtime"
)

// eachBackend runs f on the CPU backend and, where one is present (it must
// be with GLUA_REQUIRE_CUDA=1), on the GPU.
func eachBackend(t *testing.T, f func(t *testing.T, rt *runtime.Runtime)) {
	eachBackendWith(t, runtime.Options{}, f)
}

// eachBackendWith is eachBackend with runtimes made with opts.
func eachBackendWith(t *testing.T, opts runtime.Options, f func(t *testing.T, rt *runtime.Runtime)) {
	t.Run("cpu", func(t *testing.T) { f(t, newCPU(t, opts)) })
	t.Run("cuda", func(t *testing.T) {
		c := config.Default()
		c.CUDA.KernelCache = t.TempDir()
		o := opts
		o.Config, o.Backend = &c, "cuda"
		rt, err := runtime.New(o)
		if err != nil {
			cudatest.Unavailable(t, err)
		}
		t.Cleanup(func() { rt.Close() })
		f(t, rt)
	})
}

// An upload on the copy stream, a product of it on the runtime's stream
// made to wait for the copy, a download on the download stream made to
// wait for the product: what a prefetching loop and batch.Matmul do, with
// fresh random data. The two copy streams are the runtime's, shared by
// every caller, and not one stream.
func TestAsyncCopiesOrderedByEvents(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		const n = 1 << 16
		src, err := rt.NewHostArray([]int{n}, runtime.Float32, true)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			src.Set(i, rand.Float64())
		}
		copyStream, err := rt.CopyStream()
		if err != nil {
			t.Fatal(err)
		}
		downStream, err := rt.DownloadStream()
		if err != nil {
			t.Fatal(err)
		}
		again, _ := rt.CopyStream()
		downAgain, _ := rt.DownloadStream()
		if again != copyStream || downAgain != downStream || copyStream == downStream {
			t.Fatal("CopyStream and DownloadStream must each give one stream of their own, every time")
		}
		uploaded, _ := rt.NewEvent()
		scaled, _ := rt.NewEvent()
		a, err := rt.DeviceArray([]int{n}, runtime.Float32)
		if err != nil {
			t.Fatal(err)
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(a.CopyFromAsync(src, copyStream))
		must(uploaded.Record(copyStream))
		must(rt.StreamWait(nil, uploaded))
		must(rt.Scale(a, 2))
		must(scaled.Record(nil))
		must(rt.StreamWait(downStream, scaled))
		dst, err := rt.NewHostArray([]int{n}, runtime.Float32, true)
		must(err)
		must(a.CopyToHostAsync(dst, downStream))
		must(downStream.Synchronize())
		want, got := src.Floats(), dst.Floats()
		for i := range want {
			if got[i] != float64(float32(2*want[i])) {
				t.Fatalf("element %d: %v, want %v", i, got[i], 2*want[i])
			}
		}
	})
}

func TestAsyncCopiesRefuseWhatWouldBeWrong(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	other := newCPU(t, runtime.Options{})
	a, _ := rt.DeviceArray([]int{8}, runtime.Float32)
	pageable, _ := rt.NewHostArray([]int{8}, runtime.Float32, false)
	pinned, _ := rt.NewHostArray([]int{8}, runtime.Float32, true)
	wrongShape, _ := rt.NewHostArray([]int{4}, runtime.Float32, true)
	foreign, _ := other.NewStream()
	for what, err := range map[string]error{
		"pageable source":      a.CopyFromAsync(pageable, nil),
		"pageable destination": a.CopyToHostAsync(pageable, nil),
		"another shape":        a.CopyFromAsync(wrongShape, nil),
		"another runtime's":    a.CopyFromAsync(pinned, foreign),
		"no event to wait for": rt.StreamWait(nil, nil),
		"a nil source":         a.CopyFromAsync(nil, nil),
	} {
		if err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
	if err := a.CopyFromAsync(pageable, nil); !strings.Contains(err.Error(), "pinned = true") {
		t.Errorf("the pageable refusal says how to pin: %v", err)
	}
	a.Free()
	if err := a.CopyFromAsync(pinned, nil); !errors.Is(err, runtime.ErrFreed) {
		t.Errorf("a freed array: %v", err)
	}
}

// NewEvent's events time the work between them; NewSyncEvent's, which the
// runtime's own copies use, order and wait like them but Since refuses
// them with an error that says why, and the runtime goes on.
func TestSyncEventsWaitButDoNotTime(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		a, err := rt.DeviceArray([]int{1 << 20}, runtime.Float32)
		if err != nil {
			t.Fatal(err)
		}
		start, err := rt.NewEvent()
		if err != nil {
			t.Fatal(err)
		}
		end, _ := rt.NewEvent()
		sync, err := rt.NewSyncEvent()
		if err != nil {
			t.Fatal(err)
		}
		if err := start.Record(nil); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Clone(); err != nil { // device work between the events
			t.Fatal(err)
		}
		for _, e := range []*runtime.Event{end, sync} {
			if err := e.Record(nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := sync.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if done, err := sync.Done(); !done || err != nil {
			t.Fatalf("a synchronized event: done %t, %v", done, err)
		}
		if s, err := end.Since(start); err != nil || s < 0 {
			t.Fatalf("end.Since(start) = %g, %v", s, err)
		}
		for _, pair := range [][2]*runtime.Event{{sync, start}, {end, sync}} {
			if _, err := pair[0].Since(pair[1]); err == nil || !strings.Contains(err.Error(), "keep time") {
				t.Errorf("Since with an event from NewSyncEvent = %v, want an error about timing", err)
			}
		}
		if s, err := end.Since(start); err != nil || s < 0 {
			t.Fatalf("after the refusal, end.Since(start) = %g, %v", s, err)
		}
	})
}

// On the CPU backend a copy on another stream of an array that a kernel
// on the runtime's stream writes is refused until that stream waits for
// an event recorded after the kernel: on a GPU it could copy the array's
// old bytes. The runtime's own streams keep that order (batch, Stager).
func TestACopyThatNothingOrdersAfterTheKernelIsRefused(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	x, err := rt.DeviceArray([]int{1 << 16}, runtime.Float32)
	if err != nil {
		t.Fatal(err)
	}
	h, err := rt.NewHostArray([]int{1 << 16}, runtime.Float32, true)
	if err != nil {
		t.Fatal(err)
	}
	s, err := rt.CopyStream()
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Fill(x, 3); err != nil {
		t.Fatal(err)
	}
	err = x.CopyToHostAsync(h, s)
	if err == nil || !strings.Contains(err.Error(), "reads device memory") || !strings.Contains(err.Error(), "that a kernel on stream") {
		t.Fatalf("a copy queued before its wait: %v; want it refused, naming the kernel", err)
	}
	e, err := rt.NewSyncEvent()
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(e.Record(nil), rt.StreamWait(s, e)); err != nil {
		t.Fatal(err)
	}
	if err := x.CopyToHostAsync(h, s); err != nil {
		t.Fatalf("after the wait: %v", err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if h.Floats()[12345] != 3 {
		t.Fatalf("element 12345 came down as %v, want 3", h.Floats()[12345])
	}
}

// On the CPU backend a reduction to a number of an array that an upload
// on another stream writes is refused until the runtime's stream waits
// for the upload: on a GPU it would reduce half-written memory. After
// the wait each gives the number of what was uploaded.
func TestAReductionThatNothingOrdersAfterAnUploadIsRefused(t *testing.T) {
	const n = 1 << 16
	rt, x, y, h, s := orderedArrays(t, n, 2)
	identity := runtime.FunctionTree(t, "return function(v) return v end")
	reductions := []struct {
		name string
		run  func() (float64, error)
		want float64
	}{
		{"Sum", func() (float64, error) { return rt.Sum(x) }, 2 * n},
		{"Norm", func() (float64, error) { return rt.Norm(x) }, math.Sqrt(4 * n)},
		{"MaxAbsDiff", func() (float64, error) { return rt.MaxAbsDiff(x, y) }, 2},
		{"MapReduce", func() (float64, error) {
			return rt.MapReduce(identity, "@k.lua", runtime.ReduceOp{Name: "sum"}, []any{x})
		}, 2 * n},
	}
	for _, r := range reductions {
		if err := x.CopyFromAsync(h, s); err != nil {
			t.Fatal(err)
		}
		if _, err := r.run(); err == nil || !strings.Contains(err.Error(), "reads device memory") || !strings.Contains(err.Error(), "that an upload on stream") {
			t.Fatalf("%s queued before its wait for the upload: %v; want it refused, naming the upload", r.name, err)
		}
		waitFor(t, rt, s)
		if got, err := r.run(); err != nil || got != r.want {
			t.Fatalf("%s after the wait: %v (%v), want %v", r.name, got, err, r.want)
		}
	}
}

// On the CPU backend a kernels.jit kernel that reads an array an upload
// on another stream writes is refused until the runtime's stream waits
// for the upload, and one that writes an array a download on another
// stream reads is too; one that only reads an array another stream only
// reads is not, since reads do not conflict.
func TestAKernelThatNothingOrdersAfterACopyIsRefused(t *testing.T) {
	const n = 1 << 12
	rt, x, y, h, s := orderedArrays(t, n, 3)
	k, err := rt.JIT(runtime.FunctionTree(t, `return function(x, y)
		local i = kernels.grid(1)
		if i <= #x then y[i] = 2 * x[i] end
	end`), "@k.lua", jit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := runtime.LaunchConfig{Grid: [3]uint32{n / 256, 1, 1}, Block: [3]uint32{256, 1, 1}}
	if err := x.CopyFromAsync(h, s); err != nil {
		t.Fatal(err)
	}
	if err := k.Launch(cfg, x, y); err == nil || !strings.Contains(err.Error(), "reads device memory (its x") || !strings.Contains(err.Error(), "that an upload on stream") {
		t.Fatalf("a kernel queued before its wait for the upload: %v; want it refused, naming the upload", err)
	}
	waitFor(t, rt, s)
	if err := k.Launch(cfg, x, y); err != nil {
		t.Fatalf("after the wait: %v", err)
	}
	// the copy stream waits for the kernel, then reads x as the kernel
	// does again: reads alone are in no order
	e, err := rt.NewSyncEvent()
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(e.Record(nil), rt.StreamWait(s, e), x.CopyToHostAsync(h, s)); err != nil {
		t.Fatal(err)
	}
	if err := k.Launch(cfg, x, y); err != nil {
		t.Fatalf("a kernel reading what a download on another stream reads: %v", err)
	}
	if err := y.CopyToHostAsync(h, s); err == nil || !strings.Contains(err.Error(), "that a kernel on stream") {
		t.Fatalf("a download of what the kernel writes, queued before its wait: %v; want it refused", err)
	}
	if err := rt.Synchronize(); err != nil {
		t.Fatal(err)
	}
	got, err := y.CopyToHost(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Floats()[n-1] != 6 {
		t.Fatalf("y's last element is %v, want 6", got.Floats()[n-1])
	}
}

// orderedArrays is a CPU runtime with x (n float32, uninitialised), y
// (zeros), h (pinned, every element v) and its copy stream, for the tests
// of the streams' order.
func orderedArrays(t *testing.T, n int, v float64) (*runtime.Runtime, *runtime.Array, *runtime.Array, *runtime.HostArray, *runtime.Stream) {
	t.Helper()
	rt := newCPU(t, runtime.Options{})
	x, errX := rt.DeviceArray([]int{n}, runtime.Float32)
	y, errY := rt.Zeros([]int{n}, runtime.Float32)
	h, errH := rt.NewHostArray([]int{n}, runtime.Float32, true)
	s, errS := rt.CopyStream()
	if err := errors.Join(errX, errY, errH, errS); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		h.Set(i, v)
	}
	return rt, x, y, h, s
}

// waitFor makes the runtime's stream wait for the work queued on s.
func waitFor(t *testing.T, rt *runtime.Runtime, s *runtime.Stream) {
	t.Helper()
	e, err := rt.NewSyncEvent()
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(e.Record(s), rt.StreamWait(nil, e)); err != nil {
		t.Fatal(err)
	}
}
