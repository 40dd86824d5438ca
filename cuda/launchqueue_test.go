package cuda

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// recorder is a launch queue's driver: it notes each launch's first
// argument, in the order issued, and fails the one numbered failAt. The
// worker's launches take delay each.
type recorder struct {
	mu     sync.Mutex
	issued []uint64
	failAt uint64
	delay  time.Duration
	most   int // takes at most this many launches a call, where set
	runs   []int
}

func (r *recorder) issue(e *queuedLaunch, params *[pooledParams + 1]unsafe.Pointer) error {
	for i := range e.n {
		params[i] = unsafe.Pointer(&e.slots[i])
	}
	v := *(*uint64)(params[0])
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failAt != 0 && v == r.failAt {
		return errors.New("refused launch")
	}
	r.issued = append(r.issued, v)
	return nil
}

// run is the worker's issueRun: a driver slower than the producer, by
// delay a call, that takes the launches it is given at once (up to most),
// in order, up to one it refuses. runs notes how many launches each call took.
func (r *recorder) run(es []*queuedLaunch, params *[pooledParams + 1]unsafe.Pointer) (int, error) {
	if r.delay > 0 {
		time.Sleep(r.delay)
	}
	r.mu.Lock()
	if r.most > 0 && len(es) > r.most {
		es = es[:r.most]
	}
	r.runs = append(r.runs, len(es))
	r.mu.Unlock()
	for i, e := range es {
		if err := r.issue(e, params); err != nil {
			return i + 1, err
		}
	}
	return len(es), nil
}

func (r *recorder) got() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]uint64(nil), r.issued...)
}

func newTestQueue(t *testing.T, r *recorder) *launchQueue {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the worker spins beside the producer, which needs two threads")
	}
	q := newLaunchQueue(queueDriver{start: func() error { return nil }, issueRun: r.run})
	if q == nil {
		t.Fatal("the worker did not start")
	}
	t.Cleanup(func() {
		select {
		case <-q.done:
		default:
			q.stop()
		}
	})
	return q
}

// launch queues v, or, where push declines, issues it as Launch would:
// after draining, on the caller's thread.
func launch(t *testing.T, q *launchQueue, r *recorder, v uint64) (queued bool) {
	t.Helper()
	f := &Function{name: "k"}
	slots := []uint64{v, 7}
	if q.push(f, [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, 0, slots) {
		return true
	}
	if err := q.drain(); err != nil {
		t.Fatalf("launch %d: %v", v, err)
	}
	var params [pooledParams + 1]unsafe.Pointer
	e := &queuedLaunch{f: f, n: len(slots)}
	copy(e.slots[:], slots)
	if err := r.issue(e, &params); err != nil {
		t.Fatalf("launch %d: %v", v, err)
	}
	return false
}

// queued starts a queue over r, wakes its worker and makes count more
// launches, and returns the queue and the number of launches made.
func queued(t *testing.T, r *recorder, count int) (*launchQueue, uint64) {
	t.Helper()
	q := newTestQueue(t, r)
	var n uint64
	wakeWorker(t, q, r, &n)
	for range count {
		n++
		launch(t, q, r, n)
	}
	return q, n
}

// inOrder checks that the launches numbered 1, 2, ... were issued in that
// order.
func inOrder(t *testing.T, r *recorder) {
	t.Helper()
	for i, v := range r.got() {
		if v != uint64(i+1) {
			t.Fatalf("launch %d issued as number %d", v, i+1)
		}
	}
}

// drained drains q and checks that the n launches made were all issued,
// in order.
func drained(t *testing.T, q *launchQueue, r *recorder, n uint64) {
	t.Helper()
	if err := q.drain(); err != nil {
		t.Fatal(err)
	}
	if got := len(r.got()); uint64(got) != n {
		t.Fatalf("drain returned with %d of %d launches issued", got, n)
	}
	inOrder(t, r)
}

// wakeWorker launches back to back, as a Lua loop does, until a launch is
// queued: the first ones after a pause go straight to the driver while the
// worker wakes.
func wakeWorker(t *testing.T, q *launchQueue, r *recorder, next *uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		*next++
		if launch(t, q, r, *next) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker never woke")
		}
	}
}

func TestLaunchQueueIssuesInOrder(t *testing.T) {
	r := &recorder{}
	// More than the queue holds, so that pushes also wait for room.
	q, n := queued(t, r, 5*launchQueueDepth)
	drained(t, q, r, n)
}

// TestLaunchQueueHandsOverTheLaunchesWaiting checks that a driver slower
// than the loop is given the launches waiting together, in order, no more
// than maxRun at once, and that those it leaves are given to it next.
func TestLaunchQueueHandsOverTheLaunchesWaiting(t *testing.T) {
	for _, most := range []int{0, 3} {
		r := &recorder{delay: 300 * time.Microsecond, most: most}
		q, n := queued(t, r, 200)
		drained(t, q, r, n)
		r.mu.Lock()
		longest := 0
		for _, k := range r.runs {
			longest = max(longest, k)
		}
		r.mu.Unlock()
		limit := maxRun
		if most > 0 {
			limit = most
		}
		if longest < 2 || longest > limit {
			t.Errorf("taking at most %d: the longest run handed over was %d launches, want 2 to %d", most, longest, limit)
		}
	}
}

func TestLaunchQueueDrainWaitsForTheWorker(t *testing.T) {
	r := &recorder{delay: 200 * time.Microsecond}
	q, n := queued(t, r, 20)
	drained(t, q, r, n)
}

func TestLaunchQueueReportsARefusedLaunchOnceAndDropsTheRest(t *testing.T) {
	r := &recorder{delay: 50 * time.Microsecond}
	q := newTestQueue(t, r)
	var n uint64
	wakeWorker(t, q, r, &n)
	r.mu.Lock()
	r.failAt = n + 3
	r.mu.Unlock()
	for range 10 {
		n++
		if !q.push(&Function{name: "k"}, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0, []uint64{n}) {
			break // the failure was seen; Launch would go to begin, which drains
		}
	}
	err := q.drain()
	if err == nil || err.Error() != "refused launch" {
		t.Fatalf("drain after a refused launch: %v", err)
	}
	for _, v := range r.got() {
		if v >= r.failAt {
			t.Errorf("launch %d, queued after the refused %d, was issued", v, r.failAt)
		}
	}
	if err := q.drain(); err != nil {
		t.Fatalf("the error was reported twice: %v", err)
	}
	// The queue works again afterwards.
	before := len(r.got())
	n++
	launch(t, q, r, n)
	if err := q.drain(); err != nil {
		t.Fatal(err)
	}
	if len(r.got()) != before+1 {
		t.Fatal("a launch after the reported failure was lost")
	}
}

func TestLaunchQueueWorkerSleepsAndWakes(t *testing.T) {
	r := &recorder{}
	q := newTestQueue(t, r)
	var n uint64
	for round := range 3 {
		// Idle past the spin: the worker sleeps, and the next launch goes
		// straight to the driver rather than wait for it to wake.
		deadline := time.Now().Add(5 * time.Second)
		for !q.asleep.Load() {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the worker never slept", round)
			}
			time.Sleep(workerSpin)
		}
		n++
		if launch(t, q, r, n) {
			t.Fatalf("round %d: a launch was queued for a sleeping worker", round)
		}
		wakeWorker(t, q, r, &n)
		if err := q.drain(); err != nil {
			t.Fatal(err)
		}
	}
	inOrder(t, r)
}

func TestLaunchQueueStopIssuesWhatIsQueued(t *testing.T) {
	r := &recorder{delay: 100 * time.Microsecond}
	q, n := queued(t, r, 30)
	if err := q.stop(); err != nil {
		t.Fatal(err)
	}
	if got := len(r.got()); uint64(got) != n {
		t.Fatalf("stop left %d of %d launches unissued", n-uint64(got), n)
	}
}

func TestLaunchQueueTakesOnlyRunsOfLaunches(t *testing.T) {
	r := &recorder{}
	q := newTestQueue(t, r)
	var n uint64
	// A launch or two between other calls (a reduction's two kernels
	// before its result is read) goes to the driver, and leaves a
	// sleeping worker asleep.
	for range 1000 {
		q.other()
		for range wakeRun - 2 {
			n++
			if launch(t, q, r, n) {
				t.Fatalf("launch %d, in a run of %d, was queued", n, wakeRun-2)
			}
		}
	}
	if !q.asleep.Load() {
		t.Fatal("short runs of launches woke the worker")
	}
	// A loop's run wakes it, and then only the run's first launch after
	// another call goes to the driver. (The worker may fall asleep again
	// between two steps on a busy machine; a few tries allow for that.)
	queued := false
	for try := 0; try < 100 && !queued; try++ {
		wakeWorker(t, q, r, &n)
		q.other()
		n++
		if launch(t, q, r, n) {
			t.Fatal("the first launch after another call was queued")
		}
		n++
		queued = launch(t, q, r, n)
	}
	if !queued {
		t.Fatal("the second launch of a run, with the worker awake, always went to the driver")
	}
	if err := q.drain(); err != nil {
		t.Fatal(err)
	}
	inOrder(t, r)
}

// TestLaunchQueueDrainDoesNotWaitForLaterLaunches keeps one goroutine
// launching faster than the worker issues, and checks that another's
// drain returns once the launches queued before it are issued.
func TestLaunchQueueDrainDoesNotWaitForLaterLaunches(t *testing.T) {
	r := &recorder{delay: 20 * time.Microsecond}
	q := newTestQueue(t, r)
	var n uint64
	wakeWorker(t, q, r, &n)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		f := &Function{name: "k"}
		for v := uint64(1 << 32); ; v++ {
			select {
			case <-stop:
				return
			default:
			}
			q.push(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0, []uint64{v})
		}
	}()
	defer func() {
		close(stop)
		<-done
	}()
	time.Sleep(20 * time.Millisecond) // the queue is full by now
	drained := make(chan error, 1)
	go func() {
		for range 5 {
			if err := q.drain(); err != nil {
				drained <- err
				return
			}
		}
		drained <- nil
	}()
	select {
	case err := <-drained:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("five drains beside a loop of launches did not return in 5 s")
	}
}

// TestRunLengthKeepsToOneStreamAndTheDefaultSharedMemory: a run ends at
// the first launch on another stream or with opted-in shared memory.
func TestRunLengthKeepsToOneStreamAndTheDefaultSharedMemory(t *testing.T) {
	run := func(specs ...[2]uint32) []*queuedLaunch { // {stream, shared}
		es := make([]*queuedLaunch, len(specs))
		for i, s := range specs {
			es[i] = &queuedLaunch{stream: device.Stream(s[0]), shared: s[1]}
		}
		return es
	}
	big := uint32(defaultSharedLimit + 1)
	for _, c := range []struct {
		es   []*queuedLaunch
		want int
	}{
		{run([2]uint32{1, 0}), 1},
		{run([2]uint32{1, 0}, [2]uint32{1, 0}, [2]uint32{1, 1024}), 3},
		{run([2]uint32{1, 0}, [2]uint32{1, 0}, [2]uint32{2, 0}, [2]uint32{1, 0}), 2},
		{run([2]uint32{1, 0}, [2]uint32{1, big}, [2]uint32{1, 0}), 1},
		{run([2]uint32{1, big}, [2]uint32{1, 0}), 1},
		{run([2]uint32{1, defaultSharedLimit}, [2]uint32{1, defaultSharedLimit}), 2},
	} {
		if got := runLength(c.es); got != c.want {
			t.Errorf("run of %d launches: length %d, want %d", len(c.es), got, c.want)
		}
	}
}
