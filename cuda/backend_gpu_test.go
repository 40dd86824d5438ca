package cuda_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/pool"
)

func TestMain(m *testing.M) { cudatest.Main(m) }

var (
	_ pool.Source             = (*cuda.Backend)(nil)
	_ pool.EventSource        = (*cuda.Backend)(nil)
	_ pool.AsyncSource        = (*cuda.Backend)(nil)
	_ pool.DeviceSynchronizer = (*cuda.Backend)(nil)
)

func TestInfoDescribesTheDevice(t *testing.T) {
	b := cudatest.Shared(t)
	info, err := b.Info()
	if err != nil {
		t.Fatal(err)
	}
	if info.Name == "" || info.ComputeCapability[0] < 5 || info.Multiprocessors < 1 {
		t.Errorf("implausible device: %+v", info)
	}
	if info.TotalMemory == 0 || info.FreeMemory == 0 || info.FreeMemory > info.TotalMemory {
		t.Errorf("implausible memory: free %d of %d", info.FreeMemory, info.TotalMemory)
	}
	if b.Name() != "cuda" {
		t.Errorf("Name() = %q", b.Name())
	}
	v := b.Versions()
	for what, l := range map[string]cuda.Library{"driver": v.Driver, "NVRTC": v.NVRTC, "cuBLAS": v.CUBLAS} {
		if l.Version == "unknown" || l.Name == "" {
			t.Errorf("%s: %+v", what, l)
		}
		if !strings.HasPrefix(l.Path, "/") {
			t.Errorf("%s: no real path found for %s: %q", what, l.Name, l.Path)
		}
	}
	lines := b.Describe()
	joined := strings.Join(lines, "\n")
	for _, want := range []string{"CUDA driver " + v.Driver.Version, "NVRTC " + v.NVRTC.Version, "cuBLAS " + v.CUBLAS.Version, "kernel target: sm_"} {
		if !strings.Contains(joined, want) {
			t.Errorf("Describe() lacks %q:\n%s", want, joined)
		}
	}
	t.Logf("\n%s", joined)
}

func TestLoadingAgainSharesThePrimaryContext(t *testing.T) {
	a := cudatest.Shared(t)
	b := cudatest.Load(t, cuda.Config{})
	// Memory from one is usable through the other: same device, same
	// primary context.
	p, err := a.Alloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free(p, 4096)
	src := []byte(strings.Repeat("glua", 1024))
	if err := b.Upload(p, src, 0); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(src))
	if err := a.Download(got, p, 0); err != nil || string(got) != string(src) {
		t.Fatalf("round trip through two backends: %v", err)
	}
}

func TestClosedBackendRefusesWork(t *testing.T) {
	b := cudatest.Load(t, cuda.Config{})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := b.Alloc(16); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Alloc after Close = %v, want an error saying the backend is closed", err)
	}
}

func TestBadDeviceOrdinalIsAnError(t *testing.T) {
	cudatest.Shared(t)
	_, err := cuda.Load(cuda.Config{Device: 4096})
	if err == nil || !strings.Contains(err.Error(), "device 4096") {
		t.Fatalf("Load(Device: 4096) = %v", err)
	}
}

func TestEventsTimeDeviceWork(t *testing.T) {
	b := cudatest.Shared(t)
	s := cudatest.Stream(t, b)
	start, _ := b.NewTimingEvent()
	end, err := b.NewTimingEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer b.DestroyEvent(start)
	defer b.DestroyEvent(end)
	plain, err := b.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer b.DestroyEvent(plain)
	const n = 256 << 20
	p, err := b.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(p, n)
	if err := b.Record(start, s); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if err := b.Memset(p, 7, n, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Record(end, s); err != nil {
		t.Fatal(err)
	}
	if err := b.Record(plain, s); err != nil {
		t.Fatal(err)
	}
	if err := b.EventSynchronize(end); err != nil {
		t.Fatal(err)
	}
	if err := b.EventSynchronize(plain); err != nil {
		t.Fatal(err)
	}
	// The driver refuses to time an event made without timing.
	if _, err := b.Elapsed(start, plain); err == nil {
		t.Error("Elapsed to an event made by NewEvent (no timing) succeeded")
	}
	done, err := b.EventDone(end)
	if err != nil || !done {
		t.Fatalf("EventDone after EventSynchronize = %v, %v", done, err)
	}
	sec, err := b.Elapsed(start, end)
	if err != nil {
		t.Fatal(err)
	}
	// 5 GiB of memset takes well over a microsecond and well under 10 s.
	if sec <= 1e-6 || sec > 10 {
		t.Errorf("Elapsed = %v s for 5 GiB of memset", sec)
	}
}

func TestEventNotYetReachedIsNotAnError(t *testing.T) {
	b := cudatest.Shared(t)
	s := cudatest.Stream(t, b)
	e, err := b.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer b.DestroyEvent(e)
	const n = 1 << 30
	p, err := b.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(p, n)
	for range 50 {
		b.Memset(p, 1, n, s)
	}
	b.Record(e, s)
	done, err := b.EventDone(e)
	if err != nil {
		t.Fatalf("EventDone on pending work: %v", err)
	}
	if done {
		t.Log("50 GiB of memset finished before the query; the not-ready path was not exercised")
	}
	if err := b.StreamSynchronize(s); err != nil {
		t.Fatal(err)
	}
	if done, err := b.EventDone(e); !done || err != nil {
		t.Errorf("after StreamSynchronize: %v, %v", done, err)
	}
}

func TestHugeAllocIsOutOfMemoryAndTheBackendStaysUsable(t *testing.T) {
	b := cudatest.Shared(t)
	_, total, err := b.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = b.Alloc(4 * total)
	if err == nil {
		t.Fatal("allocating four times the device's memory succeeded")
	}
	if !errors.Is(err, device.ErrOutOfMemory) || !strings.Contains(err.Error(), "CUDA_ERROR_OUT_OF_MEMORY") {
		t.Errorf("error %q does not wrap device.ErrOutOfMemory with the driver's name", err)
	}
	if errors.Is(err, cuda.ErrContextLost) {
		t.Errorf("out of memory reported as a lost context: %v", err)
	}
	t.Logf("%v (in %v)", err, time.Since(start))
	p, err := b.Alloc(1 << 20)
	if err != nil {
		t.Fatalf("backend unusable after OOM: %v", err)
	}
	if err := b.Free(p, 1<<20); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentGoroutinesEachGetTheContext(t *testing.T) {
	b := cudatest.Shared(t)
	rng := newRand(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		data := randomBytes(rng, 1<<16+g)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := b.NewStream()
			if err != nil {
				errs <- err
				return
			}
			defer b.DestroyStream(s)
			p, err := b.Alloc(uint64(len(data)))
			if err != nil {
				errs <- err
				return
			}
			defer b.Free(p, uint64(len(data)))
			got := make([]byte, len(data))
			for range 50 {
				if err := b.Upload(p, data, s); err != nil {
					errs <- err
					return
				}
				clear(got)
				if err := b.Download(got, p, s); err != nil {
					errs <- err
					return
				}
				if string(got) != string(data) {
					errs <- errors.New("round trip differs")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A collective's stream must get multiprocessors ahead of a product's
// pending blocks, or the two run one after the other (dist_matmul's
// gathers took as long again as the products on four H100s).
func TestPriorityStreamOutranksPlainStreams(t *testing.T) {
	b := cudatest.Shared(t)
	plain := cudatest.Stream(t, b)
	high, err := b.NewPriorityStream()
	if err != nil {
		t.Fatal(err)
	}
	defer b.DestroyStream(high)
	ph, err := b.StreamPriority(high)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := b.StreamPriority(plain)
	if err != nil {
		t.Fatal(err)
	}
	if ph >= pp {
		t.Errorf("priority stream has priority %d, a plain stream %d: want a greater (lower) number", ph, pp)
	}
	const n = 1 << 20
	p, err := b.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(p, n)
	if err := b.Memset(p, 7, n, high); err != nil {
		t.Fatal(err)
	}
	if err := b.StreamSynchronize(high); err != nil {
		t.Fatal(err)
	}
	host := make([]byte, n)
	if err := b.Download(host, p, high); err != nil {
		t.Fatal(err)
	}
	for i, v := range host {
		if v != 7 {
			t.Fatalf("byte %d after a memset on the priority stream = %d, want 7", i, v)
		}
	}
}
