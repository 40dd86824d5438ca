package agree

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/callhead"
	"github.com/gluaproject/glua/internal/hello"
)

// group starts size checkers on the loopback, each recording its
// failure on a channel.
func group(t *testing.T, size int) ([]*Checker, []chan *Error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cs := make([]*Checker, size)
	fails := make([]chan *Error, size)
	for r := range fails {
		fails[r] = make(chan *Error, 1)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	var rootErr error
	go func() {
		defer wg.Done()
		cs[0], rootErr = Root(l, size, 5*time.Second, func(e *Error) { fails[0] <- e })
	}()
	for r := 1; r < size; r++ {
		c, err := Join(l.Addr().String(), r, size, 5*time.Second, func(e *Error) { fails[r] <- e })
		if err != nil {
			t.Fatal(err)
		}
		cs[r] = c
	}
	wg.Wait()
	if rootErr != nil {
		t.Fatal(rootErr)
	}
	t.Cleanup(func() {
		for _, c := range cs {
			c.Close()
		}
	})
	return cs, fails
}

func allReduce(n uint64) callhead.Header {
	return callhead.Header{Kind: callhead.AllReduce, DType: device.Float32, Op: device.ReduceSum, Root: -1, Count: n}
}

// Ranks making the same calls, each at its own pace and rank 0 last, never
// fail, past the point where rank 0 trims what every rank has passed.
func TestSameCallsNeverFail(t *testing.T) {
	cs, fails := group(t, 3)
	const calls = 5000
	var wg sync.WaitGroup
	for r := len(cs) - 1; r >= 0; r-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range calls {
				h := allReduce(uint64(k%7 + 1))
				if k%10 == 9 {
					h = callhead.Header{Kind: callhead.Barrier, Root: -1}
				}
				if err := cs[r].Call(h); err != nil {
					t.Errorf("rank %d call %d: %v", r, k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for r := 1; r < len(cs); r++ {
		cs[r].Close() // a rank that ends after its last call has not left early
	}
	expectNoFailure(t, fails)
	cs[0].mu.Lock()
	defer cs[0].mu.Unlock()
	if len(cs[0].own) >= calls {
		t.Errorf("rank 0 kept all %d headers: trimming never ran", len(cs[0].own))
	}
}

// A rank whose call differs from rank 0's makes every rank fail, naming it
// and the difference as the CPU backend's ring does, and every later call
// returns that failure.
func TestADifferentCallFailsEveryRank(t *testing.T) {
	for _, tc := range []struct {
		theirs callhead.Header
		op     string
		msg    string
	}{
		{allReduce(5), "all_reduce", "rank 2 has 5 float32 elements, rank 0 has 4"},
		{callhead.Header{Kind: callhead.AllReduce, DType: device.Float64, Op: device.ReduceSum, Root: -1, Count: 4}, "all_reduce", "rank 2 has 4 float64 elements, rank 0 has 4 float32 elements"},
		{callhead.Header{Kind: callhead.Broadcast, DType: device.Float32, Root: 0, Count: 4}, "all_reduce", "rank 2 called broadcast, rank 0 called all_reduce"},
	} {
		cs, fails := group(t, 3)
		for r, c := range cs {
			c.Call(allReduce(8))
			h := allReduce(4)
			if r == 2 {
				h = tc.theirs
			}
			c.Call(h)
		}
		for r, f := range fails {
			select {
			case e := <-f:
				if e.Op != tc.op || e.Rank != 2 || e.Msg != tc.msg {
					t.Errorf("rank %d: %+v, want %s from rank 2: %s", r, e, tc.op, tc.msg)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("rank %d was not told of the difference", r)
			}
			if err := cs[r].Call(allReduce(4)); err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("rank %d: a later call returned %v", r, err)
			}
		}
	}
}

// A rank that leaves before a call rank 0 makes fails the group at once,
// whether rank 0 makes that call before or after the rank leaves.
func TestARankThatLeavesEarlyFailsTheGroup(t *testing.T) {
	for _, callFirst := range []bool{false, true} {
		cs, fails := group(t, 3)
		for _, c := range cs {
			c.Call(allReduce(4))
		}
		cs[2].Call(allReduce(4))
		if callFirst {
			cs[0].Call(allReduce(4))
		}
		cs[1].Close()
		if !callFirst {
			time.Sleep(50 * time.Millisecond)
			err := cs[0].Call(allReduce(4))
			if e, ok := err.(*Error); !ok || !e.ThisCall {
				t.Errorf("rank 0's call after rank 1 left returned %#v, want the failure found at this call", err)
			}
		}
		want := "rank 1 left the group after 1 collective call, before this one"
		for _, r := range []int{0, 2} {
			select {
			case e := <-fails[r]:
				if e.Rank != 1 || e.Msg != want {
					t.Errorf("rank 0 called first %v: rank %d: %+v", callFirst, r, e)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("rank 0 called first %v: rank %d was not told", callFirst, r)
			}
		}
	}
}

// A rank of another group on rank 0's port, claiming a place that does
// not exist here, stops the group from forming with an error that says so.
func TestAJoinFromOutsideTheGroupIsRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		conn, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			return
		}
		defer conn.Close()
		hello := binary.LittleEndian.AppendUint32([]byte(helloMagic), 1)
		conn.Write(binary.LittleEndian.AppendUint32(hello, 3))
		time.Sleep(time.Second)
	}()
	_, err = Root(l, 2, 5*time.Second, func(*Error) {})
	if err == nil || !strings.Contains(err.Error(), "as rank 1 of 3, in a group of 2") {
		t.Fatalf("got %v", err)
	}
}

// Clients that connect to rank 0's port and send nothing, or send what no
// rank sends, are dropped on their own deadline and named in the log; the
// ranks that do come form the group at once, whatever the strangers do.
func TestSilentOrForeignClientsDoNotStallTheGroup(t *testing.T) {
	logged := &syncWriter{w: new(strings.Builder)}
	log.SetOutput(logged)
	defer log.SetOutput(os.Stderr)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	silent, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	foreign, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer foreign.Close()
	foreign.Write([]byte("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"))
	start := time.Now()
	type joined struct {
		c   *Checker
		err error
	}
	root := make(chan joined, 1)
	go func() {
		c, err := Root(l, 2, 30*time.Second, func(*Error) {})
		root <- joined{c, err}
	}()
	time.Sleep(100 * time.Millisecond) // the strangers are accepted first
	one, err := Join(l.Addr().String(), 1, 2, 30*time.Second, func(*Error) {})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	r := <-root
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.c.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the group took %v to form beside a silent client", d)
	}
	deadline := time.Now().Add(hello.Wait + 2*time.Second)
	for time.Now().Before(deadline) && strings.Count(logged.String(), "dropped a connection") < 2 {
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range []string{
		"rank 0's check of calls at " + l.Addr().String() + ": dropped a connection from " + foreign.LocalAddr().String() + ": not a glua rank (bad hello)",
		"rank 0's check of calls at " + l.Addr().String() + ": dropped a connection from " + silent.LocalAddr().String() + ": it sent no hello in time",
	} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("the log has no %q:\n%s", want, logged.String())
		}
	}
}

// syncWriter lets the log's writer be read while the log writes to it.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// A rank that never joins stops the group from forming within the timeout.
func TestARankThatNeverJoinsTimesOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := time.Now()
	_, err = Root(l, 2, 200*time.Millisecond, func(*Error) {})
	if err == nil || !strings.Contains(err.Error(), "1 of 2 ranks joined") {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

// Settle returns once every call so far was compared: nil on every rank
// when they agreed, the difference on every rank when not, without
// depending on when the verdict would otherwise arrive.
func TestSettleReportsEveryCallBeforeIt(t *testing.T) {
	for _, differ := range []bool{false, true} {
		cs, _ := group(t, 3)
		errs := make([]error, len(cs))
		var wg sync.WaitGroup
		for r, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 50 {
					h := allReduce(4)
					if differ && r == 1 && k == 49 {
						h = allReduce(6)
					}
					c.Call(h)
				}
				errs[r] = c.Settle(5 * time.Second)
			}()
		}
		wg.Wait()
		for r, err := range errs {
			if !differ && err != nil {
				t.Errorf("rank %d: %v", r, err)
			}
			if differ && (err == nil || err.Error() != "all_reduce: rank 1 has 6 float32 elements, rank 0 has 4") {
				t.Errorf("rank %d: %v", r, err)
			}
		}
	}
}

// A Settle that a rank does not join ends at the timeout with an error.
func TestSettleWaitsNoLongerThanItsTimeout(t *testing.T) {
	cs, _ := group(t, 2)
	cs[0].Call(allReduce(4))
	start := time.Now()
	if err := cs[0].Settle(100 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "within 100ms") {
		t.Errorf("rank 0: %v", err)
	}
	if err := cs[1].Settle(100 * time.Millisecond); err == nil {
		t.Error("rank 1 settled without rank 0's confirmation")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

func send(peer int, bytes uint64) callhead.Header {
	return callhead.Header{Kind: callhead.Send, Root: int32(peer), Count: bytes}
}

func recv(peer int, bytes uint64) callhead.Header {
	return callhead.Header{Kind: callhead.Recv, Root: int32(peer), Count: bytes}
}

// expectFailure waits for every rank in ranks to be told of the group's
// failure, and checks what it says.
func expectFailure(t *testing.T, fails []chan *Error, ranks []int, atFault int, msg string, gone bool) {
	t.Helper()
	for _, r := range ranks {
		select {
		case e := <-fails[r]:
			if e.Rank != atFault || e.Msg != msg || e.Gone != gone {
				t.Errorf("rank %d was told %+v, want rank %d: %q (gone %v)", r, e, atFault, msg, gone)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("rank %d was not told %q", r, msg)
		}
	}
}

func expectNoFailure(t *testing.T, fails []chan *Error) {
	t.Helper()
	time.Sleep(200 * time.Millisecond)
	for r, f := range fails {
		select {
		case e := <-f:
			t.Errorf("rank %d was told %+v", r, e)
		default:
		}
	}
}

// Sends and recvs that pair, in any order between the collectives and
// however the ranks interleave them, never fail.
func TestPointToPointCallsThatPairNeverFail(t *testing.T) {
	cs, fails := group(t, 3)
	calls := [][]callhead.Header{
		{send(1, 8), recv(2, 4), allReduce(4), send(1, 16), send(2, 1), allReduce(4)},
		{recv(0, 8), allReduce(4), recv(0, 16), send(2, 3), allReduce(4)},
		{send(0, 4), allReduce(4), recv(1, 3), recv(0, 1), allReduce(4)},
	}
	// Rank 0 last, so that the others' calls wait to be paired with its own.
	for _, r := range []int{2, 1, 0} {
		for _, h := range calls[r] {
			if err := cs[r].Call(h); err != nil {
				t.Fatalf("rank %d, %s: %v", r, h.PairCall(), err)
			}
		}
	}
	if err := cs[0].Settle(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	expectNoFailure(t, fails)
}

// A send and a recv that cannot pair fail every rank at once, naming both
// calls as the CPU backend's ring does, rather than waiting for the
// timeout: NCCL would wait for ever.
func TestPointToPointCallsThatDoNotPairFailEveryRank(t *testing.T) {
	for _, tc := range []struct {
		name    string
		calls   [][]callhead.Header // ranks 0, 1, 2
		atFault int
		msg     string
	}{
		{"both send", [][]callhead.Header{{send(1, 8)}, {send(0, 8)}, nil}, 1, "rank 1 called send to rank 0, rank 0 called send to rank 1"},
		{"sizes", [][]callhead.Header{{recv(2, 8)}, nil, {send(0, 12)}}, 2, "rank 2 sends 12 bytes, rank 0 receives 8"},
		{"a collective between", [][]callhead.Header{{allReduce(4), send(1, 8)}, {recv(0, 8), allReduce(4)}, {allReduce(4)}}, 1,
			"rank 1 called recv from rank 0 after 0 collective calls, rank 0 called send to rank 1 after 1"},
		{"a collective first", [][]callhead.Header{nil, {allReduce(4), send(2, 8)}, {recv(1, 8), allReduce(4)}}, 2,
			"rank 2 called recv from rank 1, rank 1 called all_reduce"},
		{"the peer moved on", [][]callhead.Header{{allReduce(4)}, {send(2, 8), allReduce(4)}, {allReduce(4)}}, 1,
			"rank 1 called send to rank 2, rank 2 called all_reduce"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, fails := group(t, 3)
			for r, calls := range tc.calls {
				for _, h := range calls {
					cs[r].Call(h)
				}
			}
			expectFailure(t, fails, []int{0, 1, 2}, tc.atFault, tc.msg, false)
		})
	}
}

// A rank that ends without closing its end (its process exited or failed)
// is reported to every rank as gone, at once, so that a collective waiting
// on it can be aborted; its later calls fail naming it. Rank 0 relays the
// news from the others.
func TestARankGoneWithoutGoodbyeIsReportedToEveryRank(t *testing.T) {
	for _, gone := range []int{0, 1} {
		cs, fails := group(t, 3)
		for _, c := range cs {
			c.Call(allReduce(4))
		}
		cs[gone].Abort()
		var others []int
		for r := range 3 {
			if r != gone {
				others = append(others, r)
			}
		}
		want := fmt.Sprintf("rank %d left the group without closing it (it exited or failed)", gone)
		expectFailure(t, fails, others, gone, want, true)
		if err := cs[2].Call(allReduce(4)); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("rank %d left the group", gone)) {
			t.Errorf("rank %d gone: rank 2's next call returned %v", gone, err)
		}
	}
}

// Rank 0 closing after the same calls as the others is no failure, nor
// are sends and recvs between the others after it; a later collective,
// which rank 0 will never make, fails at once.
func TestRankZerosGoodbyeEndsOnlyCallsItWillNotMake(t *testing.T) {
	cs, fails := group(t, 3)
	for _, c := range cs {
		c.Call(allReduce(4))
	}
	cs[0].Close()
	time.Sleep(100 * time.Millisecond)
	if err := cs[1].Call(send(2, 8)); err != nil {
		t.Errorf("a send between the others after rank 0 closed: %v", err)
	}
	if err := cs[2].Call(recv(1, 8)); err != nil {
		t.Errorf("a recv between the others after rank 0 closed: %v", err)
	}
	expectNoFailure(t, fails)
	err := cs[1].Call(allReduce(4))
	if err == nil || err.(*Error).Msg != "rank 0 left the group after 1 collective call, before this one" {
		t.Errorf("rank 1's call after rank 0 closed returned %v", err)
	}
}

// Rank 0 knows whom it waits for: the ranks that have not made one of its
// calls, and the earliest such call, which a timeout then names.
func TestRankZeroNamesTheRanksThatHaveNotMadeItsCalls(t *testing.T) {
	cs, _ := group(t, 3)
	cs[0].Call(allReduce(4))
	cs[0].Call(callhead.Header{Kind: callhead.Barrier, Root: -1})
	cs[1].Call(allReduce(4))
	cs[1].Call(callhead.Header{Kind: callhead.Barrier, Root: -1})
	var ranks []int
	var call string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ranks, call = cs[0].Missing(); len(ranks) == 1 {
			break
		}
	}
	if len(ranks) != 1 || ranks[0] != 2 || call != "all_reduce" {
		t.Errorf("Missing() = %v, %q; want [2], all_reduce", ranks, call)
	}
	if ranks, _ := cs[1].Missing(); ranks != nil {
		t.Errorf("rank 1's Missing() = %v, want nil: only rank 0 knows", ranks)
	}
}

// Paired returns once rank 0 has paired a rank's latest send or recv with
// its peer, whichever rank made its half first, and not before: NCCL's
// first send or recv between two ranks blocks both on the host until the
// other comes, so a rank goes in only when its peer will.
func TestPairedWaitsForThePeersHalf(t *testing.T) {
	cs, fails := group(t, 3)
	paired := func(r, peer int) chan error {
		ch := make(chan error, 1)
		go func() { ch <- cs[r].Paired(peer, 5*time.Second) }()
		return ch
	}
	// rank 1 sends to rank 2, rank 2 receives later; rank 0 sends to rank
	// 1 after rank 1 already waits to receive from it
	if err := cs[1].Call(send(2, 8)); err != nil {
		t.Fatal(err)
	}
	if err := cs[1].Call(recv(0, 4)); err != nil {
		t.Fatal(err)
	}
	first, second := paired(1, 2), paired(1, 0)
	select {
	case err := <-first:
		t.Fatalf("rank 1's send was paired before rank 2 made its recv: %v", err)
	case err := <-second:
		t.Fatalf("rank 1's recv was paired before rank 0 made its send: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := cs[2].Call(recv(1, 8)); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]chan error{"rank 1's send": first, "rank 2's recv": paired(2, 1)} {
		if err := <-ch; err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := cs[0].Call(send(1, 4)); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]chan error{"rank 1's recv": second, "rank 0's send": paired(0, 1)} {
		if err := <-ch; err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// rank 0's own half waits for its peer's too
	if err := cs[0].Call(send(2, 1)); err != nil {
		t.Fatal(err)
	}
	third := paired(0, 2)
	select {
	case err := <-third:
		t.Fatalf("rank 0's send was paired before rank 2 made its recv: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := cs[2].Call(recv(0, 1)); err != nil {
		t.Fatal(err)
	}
	if err := <-third; err != nil {
		t.Fatalf("rank 0's send: %v", err)
	}
	// with nothing unpaired, Paired returns at once
	if err := cs[2].Paired(0, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	expectNoFailure(t, fails)
}

// A pair that cannot be made ends Paired on both ranks with the group's
// failure, whichever half came first: the rank whose call made the
// failure known gets it from Call, and its peer, which must not go into
// NCCL with its own half, gets it from Paired.
func TestPairedReportsAPairThatCannotBeMade(t *testing.T) {
	for _, zeroFirst := range []bool{false, true} {
		cs, fails := group(t, 2)
		const msg = "rank 1 receives 20 bytes, rank 0 sends 16"
		var zeroErr error
		if zeroFirst {
			zeroErr = cs[0].Call(send(1, 16))
		}
		if err := cs[1].Call(recv(0, 20)); err != nil && !zeroFirst {
			t.Fatalf("rank 1's recv, made first: %v", err)
		}
		if !zeroFirst {
			time.Sleep(50 * time.Millisecond) // rank 1's header reaches rank 0 first
			zeroErr = cs[0].Call(send(1, 16))
		}
		for r, err := range []error{cs[0].Paired(1, 5*time.Second), cs[1].Paired(0, 5*time.Second)} {
			var e *Error
			if !errors.As(err, &e) || e.Msg != msg {
				t.Errorf("zero first %v: rank %d's Paired = %v, want %q", zeroFirst, r, err, msg)
			}
		}
		if !zeroFirst {
			var e *Error
			if !errors.As(zeroErr, &e) || e.Msg != msg || !e.ThisCall {
				t.Errorf("rank 0's send, made second: %v, want %q at this call", zeroErr, msg)
			}
		}
		expectFailure(t, fails, []int{0, 1}, 1, msg, false)
	}
}

// Paired gives up at its timeout with a TimeoutError naming the peer, and
// returns at once where rank 0 has closed and pairs no more.
func TestPairedTimesOutAndEndsWithRankZero(t *testing.T) {
	cs, _ := group(t, 3)
	if err := cs[1].Call(send(2, 8)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := cs[1].Paired(2, 100*time.Millisecond)
	var te *TimeoutError
	if !errors.As(err, &te) || te.Peer != 2 {
		t.Fatalf("Paired = %v, want a TimeoutError for peer 2", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 2*time.Second {
		t.Errorf("Paired gave up after %v, its timeout is 100ms", d)
	}
	if msg := err.Error(); msg != "nothing from rank 2 within the timeout (100ms)" {
		t.Errorf("message %q", msg)
	}
	if err := cs[0].Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := cs[1].Paired(2, 50*time.Millisecond); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("rank 0 closed, and Paired still = %v", err)
		}
	}
}

// Random schedules of collectives and pairs, each rank making its part as
// the cuda backend does (Paired before its first send or recv with each
// peer, each way, a barrier at the end): made as scheduled, no rank fails or
// waits beyond its turn; with one call of one pair changed (its size, or a
// send made a recv), every rank ends with the group's failure, none hangs.
func TestRandomSchedulesEndWithoutHanging(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	for round := range 30 {
		size := 2 + rng.IntN(3)
		var calls [][]callhead.Header = make([][]callhead.Header, size)
		for range 5 + rng.IntN(20) {
			if rng.IntN(10) < 3 {
				for r := range size {
					calls[r] = append(calls[r], allReduce(4))
				}
				continue
			}
			a := rng.IntN(size)
			b := (a + 1 + rng.IntN(size-1)) % size
			n := uint64(4 * (1 + rng.IntN(3)))
			calls[a] = append(calls[a], send(b, n))
			calls[b] = append(calls[b], recv(a, n))
		}
		broken := round%2 == 1
		if broken {
			var at [][2]int
			for r, hs := range calls {
				for i, h := range hs {
					if h.Kind == callhead.Send || h.Kind == callhead.Recv {
						at = append(at, [2]int{r, i})
					}
				}
			}
			if len(at) == 0 {
				continue
			}
			p := at[rng.IntN(len(at))]
			h := &calls[p[0]][p[1]]
			if h.Kind == callhead.Send && rng.IntN(2) == 0 {
				h.Kind = callhead.Recv
			} else {
				h.Count += 4
			}
		}
		cs, _ := group(t, size)
		errs := make([]error, size)
		done := make(chan int, size)
		for r := range size {
			go func() {
				defer func() { done <- r }()
				linked := map[[2]int]bool{}
				for _, h := range calls[r] {
					if errs[r] = cs[r].Call(h); errs[r] != nil {
						return
					}
					way := [2]int{int(h.Kind), int(h.Root)}
					if (h.Kind == callhead.Send || h.Kind == callhead.Recv) && !linked[way] {
						linked[way] = true
						if errs[r] = cs[r].Paired(int(h.Root), 3*time.Second); errs[r] != nil {
							return
						}
					}
				}
				// the end as the cuda backend's Barrier makes it
				if errs[r] = cs[r].Call(callhead.Header{Kind: callhead.Barrier, Root: -1}); errs[r] == nil {
					errs[r] = cs[r].Settle(3 * time.Second)
				}
			}()
		}
		deadline := time.After(8 * time.Second)
		for range size {
			select {
			case <-done:
			case <-deadline:
				t.Fatalf("round %d: a rank still waits after 8 s; the ranks' calls:\n%s", round, scheduleText(calls))
			}
		}
		for r, err := range errs {
			var te *TimeoutError
			switch {
			case errors.As(err, &te) || err != nil && strings.Contains(err.Error(), "within"):
				t.Errorf("round %d: rank %d timed out: %v", round, r, err)
			case !broken && err != nil:
				t.Errorf("round %d: rank %d failed a schedule made as planned: %v", round, r, err)
			case broken && err == nil:
				t.Errorf("round %d: rank %d ended without the failure", round, r)
			}
		}
		if t.Failed() {
			t.Fatalf("round %d (one call changed: %v), the ranks' calls:\n%s", round, broken, scheduleText(calls))
		}
		for _, c := range cs {
			c.Close()
		}
	}
}

// scheduleText is each rank's calls, a line a rank.
func scheduleText(calls [][]callhead.Header) string {
	var b strings.Builder
	for r, hs := range calls {
		fmt.Fprintf(&b, "  rank %d:", r)
		for _, h := range hs {
			if h.Kind == callhead.Send || h.Kind == callhead.Recv {
				fmt.Fprintf(&b, " %s (%d bytes);", h.PairCall(), h.Count)
			} else {
				fmt.Fprintf(&b, " %s;", h.Kind)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// A send or recv whose peer has left can never be paired: it fails the
// group in the CPU backend's words, at once or as the peer leaves, never
// at the timeout (or in NCCL, waiting for the peer to connect).
func TestAPairWithARankThatLeftFails(t *testing.T) {
	closed := func(r int) string {
		return fmt.Sprintf("rank %d closed its connection (it exited, failed or closed its communicator)", r)
	}
	check := func(t *testing.T, what string, err error, r int) {
		t.Helper()
		var e *Error
		if !errors.As(err, &e) || e.Msg != closed(r) || e.Rank != r {
			t.Errorf("%s: %v, want %q", what, err, closed(r))
		}
	}
	t.Run("a peer that closed first", func(t *testing.T) {
		cs, _ := group(t, 3)
		cs[2].Close()
		err := cs[1].Call(send(2, 8))
		if err == nil {
			err = cs[1].Paired(2, 5*time.Second)
		}
		check(t, "rank 1's send to rank 2, which closed", err, 2)
	})
	t.Run("a peer that leaves while a call waits for it", func(t *testing.T) {
		cs, fails := group(t, 3)
		if err := cs[1].Call(send(2, 8)); err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(100 * time.Millisecond)
			cs[2].Abort()
		}()
		start := time.Now()
		check(t, "rank 1's send to rank 2, which left", cs[1].Paired(2, 5*time.Second), 2)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("the failure took %v", d)
		}
		expectFailure(t, fails, []int{0, 1}, 2, closed(2), false)
	})
	t.Run("rank 0 closed", func(t *testing.T) {
		cs, _ := group(t, 2)
		cs[0].Close()
		err := cs[1].Call(recv(0, 8))
		if err == nil {
			err = cs[1].Paired(0, 5*time.Second)
		}
		check(t, "rank 1's recv from rank 0, which closed", err, 0)
	})
}
