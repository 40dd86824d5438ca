package parallel

import (
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"
)

// Every index is called once, whatever the count, and Do returns only
// after the last call has: the counts it leaves are final.
func TestDoCallsEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, goruntime.GOMAXPROCS(0), 4*goruntime.GOMAXPROCS(0) + 1, 1000} {
		calls := make([]atomic.Int32, n)
		Do(n, func(i int) {
			if i%7 == 3 {
				time.Sleep(time.Millisecond) // some calls end late
			}
			calls[i].Add(1)
		})
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("n=%d: index %d called %d times", n, i, c)
			}
		}
	}
}

// Calls run at once when there are processors for them: two calls that
// each wait for the other finish.
func TestDoRunsCallsAtOnce(t *testing.T) {
	if goruntime.GOMAXPROCS(0) < 2 {
		t.Skip("one processor")
	}
	var arrived atomic.Int32
	met := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		Do(2, func(int) {
			if arrived.Add(1) == 2 {
				close(met)
			}
			<-met
		})
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("the two calls never ran at once")
	}
}

// Do inside a call of Do, and Do from several goroutines at once, ends:
// a caller never waits for a call that no one has begun.
func TestDoNestedAndConcurrent(t *testing.T) {
	var total atomic.Int64
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			Do(16, func(i int) {
				Do(8, func(j int) { total.Add(int64(g*1000 + i*10 + j)) })
			})
			done <- struct{}{}
		}()
	}
	timeout := time.After(20 * time.Second)
	for range 8 {
		select {
		case <-done:
		case <-timeout:
			t.Fatal("nested or concurrent Do never returned")
		}
	}
	var want int64
	for g := range 8 {
		for i := range 16 {
			for j := range 8 {
				want += int64(g*1000 + i*10 + j)
			}
		}
	}
	if got := total.Load(); got != want {
		t.Fatalf("sum of calls %d, want %d", got, want)
	}
}

// Helpers end once idle: a program that copied once keeps none of them.
func TestHelpersEndWhenIdle(t *testing.T) {
	if goruntime.GOMAXPROCS(0) < 2 {
		t.Skip("one processor: no helpers")
	}
	Do(4, func(int) {})
	if Helpers() == 0 {
		t.Fatal("no helper started")
	}
	deadline := time.Now().Add(idle + 5*time.Second)
	for Helpers() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := Helpers(); n > 0 {
		t.Fatalf("%d helpers still running %s after the last copy", n, idle+5*time.Second)
	}
}
