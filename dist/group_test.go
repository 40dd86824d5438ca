package dist

import (
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gluaproject/glua/config"
	_ "github.com/gluaproject/glua/cpu"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/freeport"
	"github.com/gluaproject/glua/runtime"
)

var dtypes = []device.DType{device.Float32, device.Float64, device.Float16, device.BFloat16, device.Int32, device.Int64, device.Uint8}

func newRuntime(t *testing.T) *runtime.Runtime {
	t.Helper()
	c := config.Default()
	rt, err := runtime.New(runtime.Options{Config: &c, Backend: "cpu", CPUMemory: "256MiB"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// ranks runs body as size goroutine ranks, each with its own runtime and
// group, and returns each rank's error.
func ranks(t *testing.T, size int, timeout time.Duration, body func(g *Group, rt *runtime.Runtime) error) []error {
	t.Helper()
	addr, err := freeport.Local()
	if err != nil {
		t.Fatal(err)
	}
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		rt := newRuntime(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			place := Place{Rank: r, Size: size, LocalRank: r, From: "glua", MasterAddr: "127.0.0.1", MasterPort: port}
			g, err := New(rt, Options{Place: place, Timeout: timeout})
			if err != nil {
				errs[r] = err
				return
			}
			defer g.Close()
			errs[r] = body(g, rt)
		}()
	}
	wg.Wait()
	return errs
}

// value is rank r's element i: small whole numbers, so that every op is
// exact in every dtype and the reference needs no tolerance.
func value(r, i int) float64 { return float64(1 + (r+i)%3) }

func array(t *testing.T, rt *runtime.Runtime, n int, dt device.DType, f func(i int) float64) *runtime.Array {
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = f(i)
	}
	h, err := runtime.HostArrayFromFloats(vals, []int{n}, dt)
	if err != nil {
		t.Error(err)
		return nil
	}
	a, err := rt.ToDevice(h)
	if err != nil {
		t.Error(err)
	}
	return a
}

// reference is op over the ranks' element i, as a one-process loop
// computes it, rounded to dt.
func reference(op Op, dt device.DType, size, i int, elem func(r, i int) float64) float64 {
	acc := elem(0, i)
	for r := 1; r < size; r++ {
		v := elem(r, i)
		switch op {
		case Sum, Avg:
			acc += v
		case Prod:
			acc *= v
		case Max:
			acc = math.Max(acc, v)
		case Min:
			acc = math.Min(acc, v)
		}
	}
	if op == Avg {
		acc /= float64(size)
		if !dt.IsFloat() {
			acc = math.Trunc(acc)
		}
	}
	b := make([]byte, dt.Size())
	device.Set(dt, b, 0, acc)
	return device.Get(dt, b, 0)
}

func expect(x *runtime.Array, want func(i int) float64) error {
	got, err := x.Float64s()
	if err != nil {
		return err
	}
	for i, v := range got {
		if w := want(i); v != w {
			return fmt.Errorf("element %d = %v, want %v", i, v, w)
		}
	}
	return nil
}

func TestEveryCollectiveForEveryDTypeAndOpMatchesOneProcess(t *testing.T) {
	const n = 7 // not a multiple of the size: the ring's blocks differ
	for _, size := range []int{2, 3} {
		t.Run(strconv.Itoa(size)+" ranks", func(t *testing.T) {
			errs := ranks(t, size, 20*time.Second, func(g *Group, rt *runtime.Runtime) error {
				r := g.Rank()
				for _, dt := range dtypes {
					for _, op := range []Op{Sum, Prod, Max, Min, Avg} {
						what := fmt.Sprintf("%s %s", dt, op)
						x := array(t, rt, n, dt, func(i int) float64 { return value(r, i) })
						if err := g.AllReduce(x, op); err != nil {
							return err
						}
						if err := expect(x, func(i int) float64 { return reference(op, dt, size, i, value) }); err != nil {
							return fmt.Errorf("all_reduce %s: %w", what, err)
						}
						root := size - 1
						x = array(t, rt, n, dt, func(i int) float64 { return value(r, i) })
						if err := g.Reduce(x, root, op); err != nil {
							return err
						}
						want := func(i int) float64 { return value(r, i) }
						if r == root {
							want = func(i int) float64 { return reference(op, dt, size, i, value) }
						}
						if err := expect(x, want); err != nil {
							return fmt.Errorf("reduce %s: %w", what, err)
						}
						// Rank q's slice s of x holds value(q, s*n+i).
						xs := array(t, rt, size*n, dt, func(i int) float64 { return value(r, i) })
						out := array(t, rt, n, dt, func(int) float64 { return 0 })
						if err := g.ReduceScatter(out, xs, op); err != nil {
							return err
						}
						if err := expect(out, func(i int) float64 { return reference(op, dt, size, r*n+i, value) }); err != nil {
							return fmt.Errorf("reduce_scatter %s: %w", what, err)
						}
					}
					x := array(t, rt, n, dt, func(i int) float64 { return value(r, i) })
					if err := g.Broadcast(x, 1); err != nil {
						return err
					}
					if err := expect(x, func(i int) float64 { return value(1, i) }); err != nil {
						return fmt.Errorf("broadcast %s: %w", dt, err)
					}
					out := array(t, rt, size*n, dt, func(int) float64 { return 0 })
					x = array(t, rt, n, dt, func(i int) float64 { return value(r, i) })
					if err := g.AllGather(out, x); err != nil {
						return err
					}
					if err := expect(out, func(i int) float64 { return value(i/n, i%n) }); err != nil {
						return fmt.Errorf("all_gather %s: %w", dt, err)
					}
					// A ring of sends: each rank sends to the next and
					// receives from the one before, even ranks first.
					next, prev := (r+1)%size, (r+size-1)%size
					x = array(t, rt, n, dt, func(i int) float64 { return value(r, i) })
					in := array(t, rt, n, dt, func(int) float64 { return 0 })
					steps := []func() error{func() error { return g.Send(x, next) }, func() error { return g.Recv(in, prev) }}
					if r%2 == 1 {
						steps[0], steps[1] = steps[1], steps[0]
					}
					if size%2 == 1 && r == size-1 {
						// An odd ring: the last rank must not wait on rank 0's
						// recv, which comes after rank 0's send to it.
						steps[0], steps[1] = func() error { return g.Recv(in, prev) }, func() error { return g.Send(x, next) }
					}
					for _, step := range steps {
						if err := step(); err != nil {
							return err
						}
					}
					if err := expect(in, func(i int) float64 { return value(prev, i) }); err != nil {
						return fmt.Errorf("send/recv %s: %w", dt, err)
					}
				}
				return g.Barrier()
			})
			for r, err := range errs {
				if err != nil {
					t.Errorf("rank %d: %v", r, err)
				}
			}
		})
	}
}

func TestMismatchedCallsAcrossRanksFailOnEveryRank(t *testing.T) {
	cases := []struct {
		name string
		call func(g *Group, rt *runtime.Runtime) error
	}{
		{"shapes", func(g *Group, rt *runtime.Runtime) error {
			return g.AllReduce(array(t, rt, 4+g.Rank(), device.Float32, value0), Sum)
		}},
		{"dtypes", func(g *Group, rt *runtime.Runtime) error {
			return g.AllReduce(array(t, rt, 4, dtypes[g.Rank()], value0), Sum)
		}},
		{"calls", func(g *Group, rt *runtime.Runtime) error {
			x := array(t, rt, 4, device.Float32, value0)
			if g.Rank() == 0 {
				return g.Broadcast(x, 0)
			}
			return g.AllReduce(x, Sum)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			errs := ranks(t, 2, 20*time.Second, tc.call)
			for r, err := range errs {
				if err == nil {
					t.Errorf("rank %d: a mismatched call succeeded", r)
				} else if !strings.Contains(err.Error(), "rank") {
					t.Errorf("rank %d: %v names no rank", r, err)
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the ranks took %v to fail: they waited instead of failing at once", d)
			}
		})
	}
}

func value0(int) float64 { return 1 }

func TestARankThatLeavesMakesTheOthersFailWithinTheTimeout(t *testing.T) {
	start := time.Now()
	errs := ranks(t, 3, time.Second, func(g *Group, rt *runtime.Runtime) error {
		if g.Rank() == 2 {
			return nil // leaves without the all_reduce the others wait in
		}
		return g.AllReduce(array(t, rt, 4, device.Float32, value0), Sum)
	})
	for r := range 2 {
		var ce *device.CommError
		if !errors.As(errs[r], &ce) || !strings.HasPrefix(errs[r].Error(), "all_reduce: ") {
			t.Errorf("rank %d: %v, want an all_reduce error naming the rank at fault", r, errs[r])
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}

// A gather or scatter whose out overlaps x gives what it gives on
// separate arrays: x is read as it was before the call. Out as this rank's
// slice of x, or x as this rank's slice of out, runs in place (NCCL's in
// place); any other overlap goes through one temporary from the pool.
func TestGatherAndScatterOverOverlappingViewsReadXFirst(t *testing.T) {
	const n = 4
	errs := ranks(t, 2, 20*time.Second, func(g *Group, rt *runtime.Runtime) error {
		r := g.Rank()
		rows := func(a *runtime.Array, i, j int) *runtime.Array {
			v, err := a.Rows(i, j)
			if err != nil {
				t.Error(err)
			}
			return v
		}
		for _, c := range []struct {
			what        string
			temporaries uint64
			call        func(buf *runtime.Array) (*runtime.Array, error)
			want        func(i int) float64
		}{
			{"all_gather, x across both slices of out", 1,
				func(buf *runtime.Array) (*runtime.Array, error) {
					out := rows(buf, 1, 2*n)
					return out, g.AllGather(out, rows(buf, 3, n+2))
				},
				func(i int) float64 { return value(i/n, 2+i%n) }},
			{"all_gather, x this rank's slice of out", 0,
				func(buf *runtime.Array) (*runtime.Array, error) {
					out := rows(buf, 1, 2*n)
					return out, g.AllGather(out, rows(buf, r*n+1, r*n+n))
				},
				func(i int) float64 { return value(i/n, i) }},
			{"reduce_scatter, out inside x", 1,
				func(buf *runtime.Array) (*runtime.Array, error) {
					out := rows(buf, 4, n+3)
					return out, g.ReduceScatter(out, rows(buf, 1, 2*n), Sum)
				},
				func(i int) float64 { return value(0, r*n+i) + value(1, r*n+i) }},
			{"reduce_scatter, out this rank's slice of x", 0,
				func(buf *runtime.Array) (*runtime.Array, error) {
					out := rows(buf, r*n+1, r*n+n)
					return out, g.ReduceScatter(out, rows(buf, 1, 2*n), Sum)
				},
				func(i int) float64 { return value(0, r*n+i) + value(1, r*n+i) }},
		} {
			buf := array(t, rt, 3*n, device.Float32, func(i int) float64 { return value(r, i) })
			before, _ := rt.OverlapTemporaries()
			out, err := c.call(buf)
			if err != nil {
				return fmt.Errorf("%s: %w", c.what, err)
			}
			if err := expect(out, c.want); err != nil {
				return fmt.Errorf("%s: %w", c.what, err)
			}
			if k, _ := rt.OverlapTemporaries(); k-before != c.temporaries {
				return fmt.Errorf("%s took %d temporaries, want %d", c.what, k-before, c.temporaries)
			}
			buf.Free()
		}
		return nil
	})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

func TestASingleProcessGroupIsTheIdentity(t *testing.T) {
	rt := newRuntime(t)
	g, err := New(rt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Rank() != 0 || g.Size() != 1 || g.LocalRank() != 0 {
		t.Fatalf("place %d of %d (local %d)", g.Rank(), g.Size(), g.LocalRank())
	}
	x := array(t, rt, 6, device.Int32, func(i int) float64 { return float64(i) })
	same := func(i int) float64 { return float64(i) }
	for _, op := range []Op{Sum, Prod, Max, Min, Avg} {
		if err := g.AllReduce(x, op); err != nil {
			t.Fatal(err)
		}
		if err := g.Reduce(x, 0, op); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Broadcast(x, 0); err != nil {
		t.Fatal(err)
	}
	if err := expect(x, same); err != nil {
		t.Error(err)
	}
	m, _ := rt.Zeros([]int{2, 3}, device.Int32)
	if err := g.AllGather(m, x); err != nil {
		t.Fatal(err)
	}
	if err := expect(m, same); err != nil {
		t.Errorf("all_gather: %v", err)
	}
	out, _ := rt.Zeros([]int{6}, device.Int32)
	if err := g.ReduceScatter(out, m, Sum); err != nil {
		t.Fatal(err)
	}
	if err := expect(out, same); err != nil {
		t.Errorf("reduce_scatter: %v", err)
	}
	if err := g.Barrier(); err != nil {
		t.Error(err)
	}
	for _, err := range []error{g.Send(x, 0), g.Recv(x, 0)} {
		if !errors.Is(err, ErrNoPeer) {
			t.Errorf("send/recv in a single process: %v, want %v", err, ErrNoPeer)
		}
	}
}

func TestBadArgumentsAreErrorsNamingTheCall(t *testing.T) {
	rt := newRuntime(t)
	g, err := New(rt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := rt.Zeros([]int{4}, device.Float32)
	freed, _ := rt.Zeros([]int{4}, device.Float32)
	freed.Free()
	other := newRuntime(t)
	foreign, _ := other.Zeros([]int{4}, device.Float32)
	big, _ := rt.Zeros([]int{8}, device.Float32)
	ints, _ := rt.Zeros([]int{4}, device.Int32)
	cases := []struct {
		err  error
		want string
	}{
		{g.Broadcast(x, 1), "broadcast: root 1 out of range: ranks are 0 to 0"},
		{g.Reduce(x, -1, Sum), "reduce: root -1 out of range: ranks are 0 to 0"},
		{g.AllReduce(freed, Sum), "all_reduce: x: use of freed array"},
		{g.AllReduce(foreign, Sum), "all_reduce: x belongs to another runtime than the group's"},
		{g.AllReduce(x, Op(0)), "all_reduce: invalid reduction reduce op 0"},
		{g.AllGather(big, x), "all_gather: out has 8 elements, want 4 (1 ranks × 4 of x)"},
		{g.AllGather(ints, x), "all_gather: out is int32 and x is float32: they must have one dtype"},
		{g.ReduceScatter(x, big, Sum), "reduce_scatter: x has 8 elements, want 4 (1 ranks × 4 of out)"},
		{g.ReduceScatter(freed, x, Sum), "reduce_scatter: out: use of freed array"},
		{g.Send(x, 0), "send: no peer in a single process"},
	}
	for _, tc := range cases {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("got %v\nwant %s", tc.err, tc.want)
		}
	}
	if _, err := ParseOp("mean"); err == nil {
		t.Error(`ParseOp("mean") succeeded`)
	}
}

func TestPeerOutOfRangeIsRefusedBeforeAnythingIsSent(t *testing.T) {
	errs := ranks(t, 2, 5*time.Second, func(g *Group, rt *runtime.Runtime) error {
		x := array(t, rt, 4, device.Float32, value0)
		for _, err := range []error{g.Send(x, 2), g.Recv(x, -1), g.Send(x, g.Rank())} {
			if err == nil || !(strings.Contains(err.Error(), "out of range") || strings.Contains(err.Error(), "is this rank")) {
				return fmt.Errorf("got %v, want a peer error", err)
			}
		}
		// The group is still usable: nothing was sent.
		return g.AllReduce(x, Sum)
	})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// A group of several processes needs a place among them and an address
// where they meet; without either, joining fails at once, saying which,
// instead of waiting for peers that cannot come.
func TestJoiningWithoutAPlaceOrAnAddressIsAnErrorNamingIt(t *testing.T) {
	rt := newRuntime(t)
	for _, tc := range []struct {
		place Place
		want  string
	}{
		{Place{Rank: 2, Size: 2, From: "glua"}, "init: rank 2 of 2 is no place"},
		{Place{Rank: -1, Size: 2, From: "glua"}, "init: rank -1 of 2 is no place"},
		{Place{Rank: 0, Size: 2, LocalRank: 0, From: "slurm"}, "init: rank 0 of 2 (local 0), from slurm: no address where the ranks meet (set NCCL_COMM_ID=host:port, rank 0's)"},
		{Place{Rank: 1, Size: 2, LocalRank: 1, From: "torchrun", MasterAddr: "10.0.0.1"}, "init: rank 1 of 2 (local 1), from torchrun; master 10.0.0.1: no address where the ranks meet (set NCCL_COMM_ID=host:port, rank 0's)"},
	} {
		g, err := New(rt, Options{Place: tc.place, Timeout: time.Second})
		if err == nil {
			g.Close()
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v\nwant %s", tc.place, err, tc.want)
		}
	}
}

// A group that has left (Close) refuses every later call with an error
// naming the call, at once: nothing waits for ranks that are gone.
func TestCallsAfterCloseFailNamingTheCall(t *testing.T) {
	errs := ranks(t, 2, 5*time.Second, func(g *Group, rt *runtime.Runtime) error {
		x := array(t, rt, 4, device.Float32, value0)
		if err := g.AllReduce(x, Sum); err != nil {
			return err
		}
		if err := g.Close(); err != nil {
			return err
		}
		start := time.Now()
		for call, err := range map[string]error{
			"all_reduce": g.AllReduce(x, Sum),
			"broadcast":  g.Broadcast(x, 0),
			"barrier":    g.Barrier(),
		} {
			if err == nil || !strings.HasPrefix(err.Error(), call+": ") {
				return fmt.Errorf("%s after Close: %v, want an error naming the call", call, err)
			}
		}
		if d := time.Since(start); d > time.Second {
			return fmt.Errorf("calls after Close took %v", d)
		}
		return nil
	})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// An asynchronous all_gather of several pieces, each queued as soon as
// its piece is written, fills out as the synchronous one does once Wait
// has ordered the runtime's later work after it, in a group and alone;
// x overlapping out otherwise than as this rank's slice is refused.
func TestAsyncAllGatherInPiecesMatchesTheSynchronousOne(t *testing.T) {
	const pieces, n = 3, 4
	for _, size := range []int{1, 2, 3} {
		errs := ranks(t, size, 10*time.Second, func(g *Group, rt *runtime.Runtime) error {
			out := array(t, rt, pieces*size*n, device.Float32, func(int) float64 { return 0 })
			for p := range pieces {
				x := array(t, rt, n, device.Float32, func(i int) float64 { return float64(100*p + 10*g.Rank() + i) })
				slice, err := out.Rows(p*size*n+1, (p+1)*size*n)
				if err != nil {
					return err
				}
				if err := g.AllGatherAsync(slice, x); err != nil {
					return err
				}
			}
			if err := g.Wait(); err != nil {
				return err
			}
			if err := expect(out, func(i int) float64 {
				p, r, e := i/(size*n), i/n%size, i%n
				return float64(100*p + 10*r + e)
			}); err != nil {
				return fmt.Errorf("size %d, rank %d: %v", size, g.Rank(), err)
			}
			if size > 1 {
				first, _ := out.Rows(1, size*n)
				within, _ := out.Rows(2, 1+n)
				if err := g.AllGatherAsync(first, within); err == nil || !strings.Contains(err.Error(), "overlap") {
					return fmt.Errorf("an overlapping asynchronous gather returned %v", err)
				}
			}
			return nil
		})
		for r, err := range errs {
			if err != nil {
				t.Errorf("size %d, rank %d: %v", size, r, err)
			}
		}
	}
}
