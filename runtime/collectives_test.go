package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gluaproject/glua/cpu"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// heldComm is a communicator that holds device memory of its own, as
// NCCL's does; nothing is ever sent through it.
type heldComm struct{ device.Comm }

func (heldComm) DeviceBytes() uint64 { return 300 << 20 }
func (heldComm) Close() error        { return nil }

// newCPUWith is a CPU runtime whose backend wrap wraps, for fakes of
// what the CPU backend lacks (communicators, priorities).
func newCPUWith(t *testing.T, wrap func(*cpu.Backend) runtime.Backend) *runtime.Runtime {
	t.Helper()
	restore := runtime.WrapBackend(func(b runtime.Backend) runtime.Backend { return wrap(b.(*cpu.Backend)) })
	defer restore()
	return newCPU(t, runtime.Options{})
}

type heldCommBackend struct{ *cpu.Backend }

func (heldCommBackend) OpenComm(context.Context, device.CommConfig) (device.Comm, error) {
	return heldComm{}, nil
}

// The device memory a group holds outside the pool is in pool.status()
// while the group is open, and gone from it once it is closed.
func TestStatusShowsWhatAGroupHoldsOutsideThePool(t *testing.T) {
	rt := newCPUWith(t, func(b *cpu.Backend) runtime.Backend { return heldCommBackend{b} })
	c, err := rt.OpenComm(context.Background(), device.CommConfig{Rank: 0, Size: 2, Addr: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	const line = "Outside the pool: 300 MiB of NCCL's for the group of processes"
	if s := rt.Status(); !strings.Contains(s, line) {
		t.Fatalf("status while the group is open lacks %q:\n%s", line, s)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if s := rt.Status(); strings.Contains(s, "Outside the pool") {
		t.Fatalf("status after the group closed still shows it:\n%s", s)
	}
}

// abortableComm records whether it was closed or aborted.
type abortableComm struct {
	device.Comm
	closed, aborted *int
}

func (c abortableComm) Close() error { *c.closed++; return nil }
func (c abortableComm) Abort() error { *c.aborted++; return nil }

type abortableBackend struct {
	*cpu.Backend
	comm abortableComm
}

func (b abortableBackend) OpenComm(context.Context, device.CommConfig) (device.Comm, error) {
	return b.comm, nil
}

// A runtime whose script failed leaves its groups through the backend's
// Abort, which waits for no peer, once; the Close after it does not
// close them again.
func TestAbortCommsAbortsEveryGroupOnceInsteadOfClosingIt(t *testing.T) {
	var closed, aborted int
	fake := abortableComm{closed: &closed, aborted: &aborted}
	rt := newCPUWith(t, func(b *cpu.Backend) runtime.Backend { return abortableBackend{b, fake} })
	for range 2 {
		if _, err := rt.OpenComm(context.Background(), device.CommConfig{Rank: 0, Size: 2, Addr: "127.0.0.1:1"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rt.AbortComms(); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if aborted != 2 || closed != 0 {
		t.Errorf("two groups were aborted %d times and closed %d times, want 2 and 0", aborted, closed)
	}
}

// gatherComm records the stream each gather was queued on.
type gatherComm struct {
	device.Comm
	on *[]device.Stream
}

func (c gatherComm) AllGather(_, _ device.Ptr, _ int, _ device.DType, s device.Stream) error {
	*c.on = append(*c.on, s)
	return nil
}
func (gatherComm) Close() error { return nil }

// priorityBackend counts the streams it made with priority.
type priorityBackend struct {
	*cpu.Backend
	comm gatherComm
	high *[]device.Stream
}

func (b priorityBackend) OpenComm(context.Context, device.CommConfig) (device.Comm, error) {
	return b.comm, nil
}

func (b priorityBackend) NewPriorityStream() (device.Stream, error) {
	s, err := b.Backend.NewStream()
	*b.high = append(*b.high, s)
	return s, err
}

// An asynchronous gather runs on a stream of the device's greatest
// priority, so that its blocks start beside the product queued after it
// instead of after that product's last wave.
func TestAsynchronousGatherRunsOnAPriorityStream(t *testing.T) {
	var on, high []device.Stream
	rt := newCPUWith(t, func(b *cpu.Backend) runtime.Backend {
		return priorityBackend{b, gatherComm{on: &on}, &high}
	})
	c, err := rt.OpenComm(context.Background(), device.CommConfig{Rank: 0, Size: 2, Addr: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := rt.Zeros([]int{8}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	x, err := rt.Zeros([]int{4}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := c.AllGatherAsync(out, x); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(high) != 1 || len(on) != 2 || on[0] != high[0] || on[1] != high[0] {
		t.Errorf("gathers queued on %v; priority streams made: %v (want both gathers on the one priority stream)", on, high)
	}
}
