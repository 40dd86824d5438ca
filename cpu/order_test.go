package cpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

// orderFixture is a backend with a 64×64 float32 product C = A·B queued on
// the default stream, a second stream s, an event e and pinned host
// memory for C: what batch.matmul's tiles are made of.
type orderFixture struct {
	b       *Backend
	a, c    device.Ptr
	s       device.Stream
	e       device.Event
	host    []byte
	product device.Gemm
}

func newOrderFixture(t *testing.T) *orderFixture {
	t.Helper()
	b := newTestBackend(t)
	f := &orderFixture{b: b}
	const n, size = 64, 4
	var err error
	ptrs := make([]device.Ptr, 3)
	for i := range ptrs {
		if ptrs[i], err = b.Alloc(n * n * size); err != nil {
			t.Fatal(err)
		}
	}
	f.a, f.c = ptrs[0], ptrs[2]
	if f.s, err = b.NewStream(); err != nil {
		t.Fatal(err)
	}
	if f.e, err = b.NewEvent(); err != nil {
		t.Fatal(err)
	}
	if f.host, err = b.AllocHost(n * n * size); err != nil {
		t.Fatal(err)
	}
	f.product = device.Gemm{DType: device.Float32, M: n, N: n, K: n, Alpha: 1, A: ptrs[0], B: ptrs[1], C: ptrs[2], LDA: n, LDB: n, LDC: n}
	if err := b.Gemm(f.product); err != nil {
		t.Fatal(err)
	}
	return f
}

func refused(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("accepted work that nothing orders after the work it conflicts with")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("%v; want it to say %q", err, w)
		}
	}
}

// A copy on another stream of what a product writes, queued before that
// stream waits for the product, reads C's old bytes on a GPU: the CPU
// backend, which would have run the product first, refuses it, naming
// both; after the wait, or after the host waited, it is accepted.
func TestWorkThatNothingOrdersIsRefused(t *testing.T) {
	t.Run("a download before its wait", func(t *testing.T) {
		f := newOrderFixture(t)
		refused(t, f.b.DownloadAsync(f.host, f.c, f.s), "download on stream", "reads device memory", "a matmul on stream 0 writes", "StreamWait")
		if err := f.b.Record(f.e, 0); err != nil {
			t.Fatal(err)
		}
		if err := f.b.StreamWaitEvent(f.s, f.e); err != nil {
			t.Fatal(err)
		}
		if err := f.b.DownloadAsync(f.host, f.c, f.s); err != nil {
			t.Fatalf("after the wait: %v", err)
		}
	})
	t.Run("an upload over what a product reads", func(t *testing.T) {
		f := newOrderFixture(t)
		refused(t, f.b.UploadAsync(f.a, f.host, f.s), "upload on stream", "writes device memory", "a matmul on stream 0 reads")
	})
	t.Run("a product over what a copy reads", func(t *testing.T) {
		f := newOrderFixture(t)
		if err := f.b.Record(f.e, 0); err != nil {
			t.Fatal(err)
		}
		if err := f.b.StreamWaitEvent(f.s, f.e); err != nil {
			t.Fatal(err)
		}
		if err := f.b.DownloadAsync(f.host, f.c, f.s); err != nil {
			t.Fatal(err)
		}
		// the next product overwrites C before the copy out is waited for
		refused(t, f.b.Gemm(f.product), "matmul on stream 0 writes", "a download on stream")
	})
	for name, wait := range map[string]func(f *orderFixture) error{
		"the stream synchronized": func(f *orderFixture) error { return f.b.StreamSynchronize(0) },
		"everything synchronized": func(f *orderFixture) error { return f.b.Synchronize() },
		"an event synchronized": func(f *orderFixture) error {
			if err := f.b.Record(f.e, 0); err != nil {
				return err
			}
			return f.b.EventSynchronize(f.e)
		},
		"an event found done": func(f *orderFixture) error {
			if err := f.b.Record(f.e, 0); err != nil {
				return err
			}
			_, err := f.b.EventDone(f.e)
			return err
		},
		"a blocking download": func(f *orderFixture) error { return f.b.Download(make([]byte, 4), f.c, 0) },
	} {
		t.Run("after "+name, func(t *testing.T) {
			f := newOrderFixture(t)
			if err := wait(f); err != nil {
				t.Fatal(err)
			}
			if err := f.b.DownloadAsync(f.host, f.c, f.s); err != nil {
				t.Fatalf("the host waited for the product, yet: %v", err)
			}
		})
	}
}

// What cannot go wrong on a GPU is accepted: reads on two streams,
// another stream's copy of bytes the product does not touch, work on one
// stream, and work replayed from a graph.
func TestWorkThatCannotConflictIsAccepted(t *testing.T) {
	f := newOrderFixture(t)
	other, err := f.b.Alloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.b.DownloadAsync(f.host[:4096], other, f.s); err != nil {
		t.Fatalf("another allocation: %v", err)
	}
	if err := f.b.DownloadAsync(f.host, f.a, f.s); err != nil {
		t.Fatalf("a read of what the product reads: %v", err)
	}
	if err := f.b.DownloadAsync(f.host, f.c, 0); err != nil {
		t.Fatalf("the product's own stream: %v", err)
	}
	// rows 32.. of C on s, once s waited for a product of rows ..31 only
	half := f.product
	half.M = 32
	if err := f.b.Gemm(half); err != nil {
		t.Fatal(err)
	}
	if err := f.b.Record(f.e, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.b.StreamWaitEvent(f.s, f.e); err != nil {
		t.Fatal(err)
	}
	if err := f.b.DownloadAsync(f.host[:32*64*4], f.c, f.s); err != nil {
		t.Fatalf("rows the waited-for product wrote: %v", err)
	}
	rest := half
	rest.A += 32 * 64 * 4
	rest.C += 32 * 64 * 4
	if err := f.b.Gemm(rest); err != nil {
		t.Fatalf("a product of rows the copy does not read: %v", err)
	}
	// a graph's replay is not followed
	g := newOrderFixture(t)
	if err := g.b.BeginCapture(g.s); err != nil {
		t.Fatal(err)
	}
	p := g.product
	p.Stream = g.s
	if err := g.b.Gemm(p); err != nil {
		t.Fatal(err)
	}
	graph, _, err := g.b.EndCapture(g.s)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.b.StreamSynchronize(0); err != nil {
		t.Fatal(err)
	}
	if err := g.b.LaunchGraph(graph, g.s); err != nil {
		t.Fatalf("a replay: %v", err)
	}
}

// A graph launched on a stream runs its operations as that stream's
// work: one that writes what an upload on another stream still writes
// is refused before anything of the replay runs after it, naming the
// upload; once the stream waits for the upload the launch runs.
func TestAGraphLaunchIsFollowedAsItsStreamsWork(t *testing.T) {
	f := newOrderFixture(t)
	b := f.b
	if err := b.StreamSynchronize(0); err != nil { // the fixture's product is done
		t.Fatal(err)
	}
	capture, err := b.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.BeginCapture(capture); err != nil {
		t.Fatal(err)
	}
	if err := b.Memset(f.a, 1, 64, capture); err != nil {
		t.Fatal(err)
	}
	g, _, err := b.EndCapture(capture)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.UploadAsync(f.a, f.host[:64], f.s); err != nil {
		t.Fatal(err)
	}
	refused(t, b.LaunchGraph(g, 0), "memset on stream 0", "writes device memory", "an upload on stream")
	if err := errors.Join(b.Record(f.e, f.s), b.StreamWaitEvent(0, f.e)); err != nil {
		t.Fatal(err)
	}
	if err := b.LaunchGraph(g, 0); err != nil {
		t.Fatalf("after the wait: %v", err)
	}
	if err := b.StreamSynchronize(0); err != nil {
		t.Fatal(err)
	}
	if got := b.Bytes(f.a, 1)[0]; got != 1 {
		t.Fatalf("the replayed memset left %d, want 1", got)
	}
}

// A loop of work on one stream over the same bytes is followed as its
// latest pass: the product's write of C stays in sight after hundreds of
// copies out of C on its stream (a copy on another stream, unordered
// with the product, is still refused), and C's accesses stay two, its
// write and its reads, instead of piling up to maxAccesses.
func TestALoopOfWorkOnOneStreamKeepsItsWriteInSight(t *testing.T) {
	f := newOrderFixture(t)
	for range 3 * maxAccesses {
		if err := f.b.DownloadAsync(f.host, f.c, 0); err != nil {
			t.Fatal(err)
		}
	}
	refused(t, f.b.DownloadAsync(f.host, f.c, f.s), "download on stream", "reads device memory", "a matmul on stream 0 writes")
	f.b.mu.Lock()
	n := len(f.b.order.touched[f.b.containing(f.c)])
	f.b.mu.Unlock()
	if n != 2 {
		t.Errorf("C has %d accesses noted, want 2: the product's write and the latest copy's read", n)
	}
}
