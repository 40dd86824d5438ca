package ring

import (
	"context"
	"errors"
	"log"
	"math"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/hello"
)

func f32s(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		device.Set(device.Float32, b, i, float64(v))
	}
	return b
}

// expectOnEveryRank checks that every rank failed, with msg in its error,
// naming rank at fault, and that a later call fails under its own name
// saying that the first failure stopped the ranks.
func expectOnEveryRank(t *testing.T, comms []*Comm, errs []error, msg string, atFault int) {
	t.Helper()
	for r, err := range errs {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("rank %d: got %v, want an *Error containing %q", r, err, msg)
		}
		if !strings.Contains(err.Error(), msg) || e.Rank != atFault {
			t.Errorf("rank %d: got %q (rank at fault %d), want %q naming rank %d", r, err, e.Rank, msg, atFault)
		}
		if comms[r] != nil {
			var later *Error
			again := comms[r].Barrier()
			want := "barrier: the ranks stopped at an earlier " + e.Op + ": " + e.Msg
			if !errors.As(again, &later) || again.Error() != want || later.Rank != atFault {
				t.Errorf("rank %d: the call after the failure returned %v, want %q naming rank %d", r, again, want, atFault)
			}
		}
	}
}

// TestMismatchedCallsFailOnEveryRank gives ranks calls that disagree; every
// rank fails, quickly, with the same message naming both sides.
func TestMismatchedCallsFailOnEveryRank(t *testing.T) {
	cases := []struct {
		name    string
		size    int
		odd     int // the rank whose call differs
		normal  func(c *Comm) error
		oddCall func(c *Comm) error
		msg     string
	}{
		{"count", 2, 1,
			func(c *Comm) error { return c.AllReduce(make([]byte, 8*4), device.Float32, Sum) },
			func(c *Comm) error { return c.AllReduce(make([]byte, 12*4), device.Float32, Sum) },
			"all_reduce: rank 1 has 12 float32 elements, rank 0 has 8"},
		{"dtype", 3, 2,
			func(c *Comm) error { return c.AllReduce(make([]byte, 8*4), device.Float32, Sum) },
			func(c *Comm) error { return c.AllReduce(make([]byte, 8*2), device.BFloat16, Sum) },
			"rank 2 has 8 bfloat16 elements, rank 0 has 8 float32 elements"},
		{"operation", 3, 1,
			func(c *Comm) error { return c.AllReduce(make([]byte, 8*4), device.Float32, Sum) },
			func(c *Comm) error { return c.Broadcast(make([]byte, 8*4), 0) },
			"rank 1 called broadcast, rank 0 called all_reduce"},
		{"reduction", 3, 2,
			func(c *Comm) error { return c.AllReduce(make([]byte, 8*4), device.Float32, Sum) },
			func(c *Comm) error { return c.AllReduce(make([]byte, 8*4), device.Float32, Max) },
			"rank 2 reduces with max, rank 0 with sum"},
		{"root", 2, 1,
			func(c *Comm) error { return c.Broadcast(make([]byte, 3), 0) },
			func(c *Comm) error { return c.Broadcast(make([]byte, 3), 1) },
			"rank 1 has root 1, rank 0 has root 0"},
		{"all_gather size", 3, 1,
			func(c *Comm) error { return c.AllGather(make([]byte, 3*4), make([]byte, 4)) },
			func(c *Comm) error { return c.AllGather(make([]byte, 3*5), make([]byte, 5)) },
			"rank 1 has 5 bytes, rank 0 has 4"},
		{"send size", 2, 1,
			func(c *Comm) error { return c.Send(make([]byte, 8), 1) },
			func(c *Comm) error { return c.Recv(make([]byte, 12), 0) },
			"rank 1 receives 12 bytes, rank 0 sends 8"},
		{"send to a collective", 2, 1,
			func(c *Comm) error { return c.Send(make([]byte, 8), 1) },
			func(c *Comm) error { return c.AllReduce(make([]byte, 8), device.Float32, Sum) },
			"rank 0 called send"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			comms := dialAll(t, tc.size, 30*time.Second)
			start := time.Now()
			errs := onRanks(tc.size, func(r int) error {
				if r == tc.odd {
					return tc.oddCall(comms[r])
				}
				return tc.normal(comms[r])
			})
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("the ranks took %v to fail", d)
			}
			atFault := tc.odd
			if strings.HasPrefix(tc.name, "send to") {
				atFault = -1
			}
			for r, err := range errs {
				if err == nil || !strings.Contains(err.Error(), tc.msg) {
					t.Errorf("rank %d: got %v, want an error containing %q", r, err, tc.msg)
				}
			}
			if atFault >= 0 {
				expectOnEveryRank(t, comms, errs, tc.msg, atFault)
			}
		})
	}
}

// TestRankThatClosesMakesOthersFailNamingIt closes rank 2 while the others
// reduce; with a 30 s timeout they must still fail at once, naming rank 2.
func TestRankThatClosesMakesOthersFailNamingIt(t *testing.T) {
	comms := dialAll(t, 3, 30*time.Second)
	start := time.Now()
	errs := onRanks(3, func(r int) error {
		if r == 2 {
			return comms[r].Close()
		}
		return comms[r].AllReduce(make([]byte, 1<<20), device.Float32, Sum)
	})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the ranks took %v to fail", d)
	}
	if errs[2] != nil {
		t.Fatalf("rank 2's Close: %v", errs[2])
	}
	expectOnEveryRank(t, comms[:2], errs[:2], "rank 2 closed its connection", 2)
}

// TestSilentRankFailsAtTheTimeout: a rank that never calls leaves the others
// waiting no longer than the timeout. Rank 0, which waits on it, names it;
// rank 1 waits on rank 0 and may time out before rank 0's word arrives.
func TestSilentRankFailsAtTheTimeout(t *testing.T) {
	comms := dialAll(t, 3, 300*time.Millisecond)
	start := time.Now()
	errs := onRanks(2, func(r int) error { return comms[r].AllReduce(make([]byte, 16), device.Float32, Sum) })
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the ranks took %v to fail", d)
	}
	if err := errs[0]; err == nil || !strings.Contains(err.Error(), "nothing from rank 2 within the timeout") {
		t.Errorf("rank 0: got %v, want an error naming rank 2", err)
	}
	if err := errs[1]; err == nil || !strings.Contains(err.Error(), "within the timeout") {
		t.Errorf("rank 1: got %v, want a timeout", err)
	}
}

// TestDialFailsAtTheTimeoutWhenARankNeverStarts starts ranks 0 and 1 of 3.
func TestDialFailsAtTheTimeoutWhenARankNeverStarts(t *testing.T) {
	addr := freeAddr(t)
	timeout := 300 * time.Millisecond
	start := time.Now()
	errs := onRanks(2, func(r int) error {
		c, err := Dial(context.Background(), Config{Rank: r, Size: 3, Addr: addr, Timeout: timeout})
		if err == nil {
			c.Close()
		}
		return err
	})
	if d := time.Since(start); d < timeout || d > timeout+time.Second {
		t.Errorf("Dial returned after %v, want about %v", d, timeout)
	}
	for r, err := range errs {
		var e *Error
		if !errors.As(err, &e) || e.Rank != 2 || !strings.Contains(err.Error(), "rank 2 did not register") {
			t.Errorf("rank %d: got %v, want an error that rank 2 did not register", r, err)
		}
	}
}

// TestDialFailsAtTheTimeoutWithoutRankZero starts rank 1 alone.
func TestDialFailsAtTheTimeoutWithoutRankZero(t *testing.T) {
	addr := freeAddr(t)
	start := time.Now()
	_, err := Dial(context.Background(), Config{Rank: 1, Size: 2, Addr: addr, Timeout: 200 * time.Millisecond})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Dial returned after %v", d)
	}
	if err == nil || !strings.Contains(err.Error(), "could not reach rank 0 at "+addr) {
		t.Errorf("got %v, want an error that rank 0 could not be reached", err)
	}
}

// TestDialWaitsForRankZeroToStart starts rank 0 after the others.
func TestDialWaitsForRankZeroToStart(t *testing.T) {
	addr := freeAddr(t)
	errs := onRanks(3, func(r int) error {
		if r == 0 {
			time.Sleep(200 * time.Millisecond)
		}
		c, err := Dial(context.Background(), Config{Rank: r, Size: 3, Addr: addr, Timeout: 5 * time.Second})
		if err != nil {
			return err
		}
		defer c.Close()
		return c.Barrier()
	})
	mustAll(t, "dial", errs)
}

func TestDialRejectsRanksStartedWithDifferentSizes(t *testing.T) {
	addr := freeAddr(t)
	errs := onRanks(2, func(r int) error {
		_, err := Dial(context.Background(), Config{Rank: r, Size: 2 + r, Addr: addr, Timeout: 2 * time.Second})
		return err
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "rank 1 was started with 3 ranks, rank 0 with 2") {
			t.Errorf("rank %d: got %v", r, err)
		}
	}
}

// TestSendRecvBetweenEveryPair sends a distinct buffer from every rank to
// every other, in the same order on every rank.
func TestSendRecvBetweenEveryPair(t *testing.T) {
	const size = 3
	comms := dialAll(t, size, 10*time.Second)
	payload := func(from, to int) []byte { return f32s(float32(from), float32(to), 0.5) }
	errs := onRanks(size, func(r int) error {
		for from := range size {
			for to := range size {
				switch {
				case from == to:
				case r == from:
					if err := comms[r].Send(payload(from, to), to); err != nil {
						return err
					}
				case r == to:
					got := make([]byte, 12)
					if err := comms[r].Recv(got, from); err != nil {
						return err
					}
					if string(got) != string(payload(from, to)) {
						return errors.New("received the wrong bytes")
					}
				}
			}
		}
		return nil
	})
	mustAll(t, "send/recv", errs)
}

// TestBarrierWaitsForTheLastRank: no rank leaves the barrier before the
// slowest has entered it.
func TestBarrierWaitsForTheLastRank(t *testing.T) {
	const size = 3
	comms := dialAll(t, size, 10*time.Second)
	var entered atomic.Int32
	errs := onRanks(size, func(r int) error {
		time.Sleep(time.Duration(r) * 50 * time.Millisecond)
		entered.Add(1)
		if err := comms[r].Barrier(); err != nil {
			return err
		}
		if n := entered.Load(); n != size {
			return errors.New("left the barrier before every rank entered it")
		}
		return nil
	})
	mustAll(t, "barrier", errs)
}

// TestAllReduceIsReproducible: two runs give the same bits on every rank.
func TestAllReduceIsReproducible(t *testing.T) {
	const size = 3
	comms := dialAll(t, size, 10*time.Second)
	in := func(r int) []byte {
		b := make([]byte, 4*101)
		for i := range 101 {
			device.Set(device.Float32, b, i, math.Pi*float64(r+1)/float64(i+3))
		}
		return b
	}
	var first [size][]byte
	for run := range 2 {
		errs := onRanks(size, func(r int) error {
			buf := in(r)
			if err := comms[r].AllReduce(buf, device.Float32, Sum); err != nil {
				return err
			}
			if run == 0 {
				first[r] = buf
			} else if string(buf) != string(first[r]) {
				return errors.New("a second run gave other bits")
			}
			return nil
		})
		mustAll(t, "all_reduce", errs)
	}
	for r := range size {
		if string(first[r]) != string(first[0]) {
			t.Errorf("rank %d holds other bits than rank 0", r)
		}
	}
}

// TestNaNPropagates as NCCL's does: through sums and through max and min.
func TestNaNPropagates(t *testing.T) {
	comms := dialAll(t, 2, 10*time.Second)
	nan := float32(math.NaN())
	for _, op := range []Op{Sum, Max, Min} {
		errs := onRanks(2, func(r int) error {
			buf := f32s(1, 2, 3)
			if r == 1 {
				buf = f32s(nan, 2, nan)
			}
			if err := comms[r].AllReduce(buf, device.Float32, op); err != nil {
				return err
			}
			if !math.IsNaN(device.Get(device.Float32, buf, 0)) || !math.IsNaN(device.Get(device.Float32, buf, 2)) {
				return errors.New(op.String() + " dropped a NaN")
			}
			return nil
		})
		mustAll(t, op.String(), errs)
	}
}

func TestSizeOneNeedsNoNetwork(t *testing.T) {
	c, err := Dial(context.Background(), Config{Rank: 0, Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := f32s(1, 2, 3)
	for _, op := range Ops {
		if err := c.AllReduce(buf, device.Float32, op); err != nil {
			t.Fatal(err)
		}
	}
	if string(buf) != string(f32s(1, 2, 3)) {
		t.Errorf("all_reduce on one rank changed the buffer")
	}
	if err := c.Send(buf, 0); err == nil || !strings.Contains(err.Error(), "peer 0 is this rank") {
		t.Errorf("send to itself: got %v", err)
	}
}

// TestBadArgumentsFailEveryRankNamingTheCaller: a rank whose own arguments
// are wrong fails, and the others learn why from it instead of waiting.
func TestBadArgumentsFailEveryRankNamingTheCaller(t *testing.T) {
	comms := dialAll(t, 3, 30*time.Second)
	start := time.Now()
	errs := onRanks(3, func(r int) error {
		out := make([]byte, 3*4)
		if r == 1 {
			out = out[:10]
		}
		return comms[r].AllGather(out, make([]byte, 4))
	})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the ranks took %v to fail", d)
	}
	expectOnEveryRank(t, comms, errs, "out holds 10 bytes, want 12", 1)
}

func TestAfterCloseCallsFail(t *testing.T) {
	comms := dialAll(t, 2, 10*time.Second)
	comms[0].Close()
	if err := comms[0].Barrier(); err == nil || !strings.Contains(err.Error(), "communicator closed") {
		t.Errorf("got %v", err)
	}
}

// A client that connects to rank 0's rendezvous before the ranks and sends
// nothing is read on its own short deadline: the ranks meet at once, with
// nobody blamed, and the log names the stranger.
func TestSilentClientOnTheRendezvousDoesNotStallTheRanks(t *testing.T) {
	var logged strings.Builder
	var mu sync.Mutex
	log.SetOutput(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logged.Write(p)
	}))
	defer log.SetOutput(os.Stderr)
	addr := freeAddr(t)
	const size = 3
	comms := make([]*Comm, size)
	var rankZero error
	zeroDone := make(chan struct{})
	go func() {
		defer close(zeroDone)
		comms[0], rankZero = Dial(context.Background(), Config{Rank: 0, Size: size, Addr: addr, Timeout: 30 * time.Second})
	}()
	var silent net.Conn
	for deadline := time.Now().Add(5 * time.Second); silent == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		silent, _ = net.Dial("tcp", addr)
	}
	if silent == nil {
		t.Fatal("rank 0 never listened")
	}
	defer silent.Close()
	time.Sleep(100 * time.Millisecond) // rank 0 accepts the stranger first
	start := time.Now()
	errs := onRanks(size-1, func(r int) error {
		var err error
		comms[r+1], err = Dial(context.Background(), Config{Rank: r + 1, Size: size, Addr: addr, Timeout: 30 * time.Second})
		return err
	})
	<-zeroDone
	for r, err := range append([]error{rankZero}, errs...) {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	for _, c := range comms {
		defer c.Close()
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the ranks took %v to meet beside a silent client", d)
	}
	mustAll(t, "all_reduce", onRanks(size, func(r int) error { return comms[r].AllReduce(f32s(1, 2), device.Float32, Sum) }))
	want := "rank 0's rendezvous at " + addr + ": dropped a connection from " + silent.LocalAddr().String() + ": it sent no hello in time"
	for deadline := time.Now().Add(hello.Wait + 2*time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		found := strings.Contains(logged.String(), want)
		mu.Unlock()
		if found {
			return
		}
	}
	t.Errorf("the log does not name the stranger (%q):\n%s", want, logged.String())
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
