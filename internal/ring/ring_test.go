package ring

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/freeport"
)

// freeAddr is a port on 127.0.0.1 that nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := freeport.Local()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// onRanks runs f on every rank at once, each in its own goroutine, and
// returns what each returned.
func onRanks(size int, f func(rank int) error) []error {
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = f(r)
		}()
	}
	wg.Wait()
	return errs
}

// dialAll connects size ranks over 127.0.0.1 and closes them when the test ends.
func dialAll(t *testing.T, size int, timeout time.Duration) []*Comm {
	t.Helper()
	addr := freeAddr(t)
	comms := make([]*Comm, size)
	errs := onRanks(size, func(r int) error {
		var err error
		comms[r], err = Dial(context.Background(), Config{Rank: r, Size: size, Addr: addr, Timeout: timeout})
		return err
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	t.Cleanup(func() {
		for _, c := range comms {
			c.Close()
		}
	})
	return comms
}

// randomBuf is n random elements of dt, never zero, stored as dt stores
// them. Floats are positive so that a sum's relative error stays small.
func randomBuf(rng *rand.Rand, dt device.DType, n int) []byte {
	b := make([]byte, n*dt.Size())
	for i := range n {
		var v float64
		switch dt {
		case device.Int32, device.Int64:
			v = float64(rng.IntN(200) - 100)
			if v == 0 {
				v = 7
			}
		case device.Uint8:
			v = float64(1 + rng.IntN(255))
		default:
			v = 0.5 + 1.5*rng.Float64()
		}
		device.Set(dt, b, i, v)
	}
	return b
}

// reference reduces element i of every rank's input in one process: exactly
// for integers (sums and products wrap in the element's type) and in float64
// for floats.
func reference(dt device.DType, op Op, ins [][]byte, i int) float64 {
	if dt.IsFloat() {
		acc := device.Get(dt, ins[0], i)
		for _, in := range ins[1:] {
			v := device.Get(dt, in, i)
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
			acc /= float64(len(ins))
		}
		return acc
	}
	acc := int64(device.Get(dt, ins[0], i))
	for _, in := range ins[1:] {
		v := int64(device.Get(dt, in, i))
		switch op {
		case Sum, Avg:
			acc += v
		case Prod:
			acc *= v
		case Max:
			acc = max(acc, v)
		case Min:
			acc = min(acc, v)
		}
	}
	wrap := func(v int64) int64 {
		switch dt {
		case device.Int32:
			return int64(int32(v))
		case device.Uint8:
			return int64(uint8(v))
		}
		return v
	}
	acc = wrap(acc)
	if op == Avg {
		acc /= int64(len(ins))
	}
	return float64(acc)
}

// tolerance is the relative error allowed against the float64 reference:
// float16 and bfloat16 round at every step of the ring.
func tolerance(dt device.DType, op Op) float64 {
	if op == Max || op == Min || !dt.IsFloat() {
		return 0
	}
	switch dt {
	case device.Float32:
		return 1e-6
	case device.Float64:
		return 1e-14
	case device.Float16:
		return 4e-3
	}
	return 3e-2 // bfloat16
}

func checkReduced(t *testing.T, what string, dt device.DType, op Op, got []byte, ins [][]byte, first int) {
	t.Helper()
	for i := range len(got) / dt.Size() {
		want := reference(dt, op, ins, first+i)
		g := device.Get(dt, got, i)
		if math.Abs(g-want) > tolerance(dt, op)*math.Abs(want) {
			t.Fatalf("%s: element %d is %v, want %v", what, first+i, g, want)
		}
	}
}

var sizesOfBuffers = []int{0, 1, 2, 5, 7, 64}

// TestCollectivesMatchOneProcessReference runs every collective for every
// dtype and reduction, with 1, 2 and 3 ranks, on element counts that Size
// does not divide, and compares each rank's result with one computed here.
func TestCollectivesMatchOneProcessReference(t *testing.T) {
	for _, size := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("%dranks", size), func(t *testing.T) {
			comms := dialAll(t, size, 10*time.Second)
			rng := rand.New(rand.NewPCG(uint64(size), 15))
			for _, dt := range device.DTypes {
				for _, n := range sizesOfBuffers {
					ins := make([][]byte, size)
					for r := range ins {
						ins[r] = randomBuf(rng, dt, n)
					}
					for _, op := range Ops {
						collectivesOnce(t, comms, dt, op, ins)
					}
					broadcastAndGather(t, comms, dt, ins)
				}
			}
		})
	}
}

func collectivesOnce(t *testing.T, comms []*Comm, dt device.DType, op Op, ins [][]byte) {
	t.Helper()
	size, n := len(comms), len(ins[0])/dt.Size()
	name := fmt.Sprintf("%s %s n=%d", dt, op, n)
	bufs := make([][]byte, size)
	for r := range bufs {
		bufs[r] = append([]byte(nil), ins[r]...)
	}
	mustAll(t, "all_reduce "+name, onRanks(size, func(r int) error { return comms[r].AllReduce(bufs[r], dt, op) }))
	for r := range bufs {
		checkReduced(t, fmt.Sprintf("all_reduce %s rank %d", name, r), dt, op, bufs[r], ins, 0)
		if string(bufs[r]) != string(bufs[0]) {
			t.Fatalf("all_reduce %s: rank %d's result differs from rank 0's", name, r)
		}
	}
	for root := range size {
		for r := range bufs {
			bufs[r] = append([]byte(nil), ins[r]...)
		}
		mustAll(t, "reduce "+name, onRanks(size, func(r int) error { return comms[r].Reduce(bufs[r], dt, op, root) }))
		for r := range bufs {
			if r == root {
				checkReduced(t, fmt.Sprintf("reduce %s root %d", name, root), dt, op, bufs[r], ins, 0)
			} else if string(bufs[r]) != string(ins[r]) {
				t.Fatalf("reduce %s root %d: rank %d's buffer changed", name, root, r)
			}
		}
	}
	// reduce_scatter: in is Size slices of n elements; rank r gets slice r.
	rsIns := make([][]byte, size)
	for r := range rsIns {
		for range size {
			rsIns[r] = append(rsIns[r], ins[(r+len(rsIns[r]))%size]...)
		}
	}
	outs := make([][]byte, size)
	for r := range outs {
		outs[r] = make([]byte, len(ins[0]))
	}
	mustAll(t, "reduce_scatter "+name, onRanks(size, func(r int) error {
		return comms[r].ReduceScatter(outs[r], rsIns[r], dt, op)
	}))
	for r := range outs {
		checkReduced(t, fmt.Sprintf("reduce_scatter %s rank %d", name, r), dt, op, outs[r], rsIns, r*n)
	}
}

func broadcastAndGather(t *testing.T, comms []*Comm, dt device.DType, ins [][]byte) {
	t.Helper()
	size := len(comms)
	name := fmt.Sprintf("%s n=%d", dt, len(ins[0])/dt.Size())
	for root := range size {
		bufs := make([][]byte, size)
		for r := range bufs {
			bufs[r] = append([]byte(nil), ins[r]...)
		}
		mustAll(t, "broadcast "+name, onRanks(size, func(r int) error { return comms[r].Broadcast(bufs[r], root) }))
		for r := range bufs {
			if string(bufs[r]) != string(ins[root]) {
				t.Fatalf("broadcast %s root %d: rank %d does not hold root's buffer", name, root, r)
			}
		}
	}
	want := []byte{}
	for _, in := range ins {
		want = append(want, in...)
	}
	outs := make([][]byte, size)
	mustAll(t, "all_gather "+name, onRanks(size, func(r int) error {
		outs[r] = make([]byte, len(want))
		return comms[r].AllGather(outs[r], ins[r])
	}))
	for r := range outs {
		if string(outs[r]) != string(want) {
			t.Fatalf("all_gather %s: rank %d's out is not every rank's in, in rank order", name, r)
		}
	}
}

func mustAll(t *testing.T, what string, errs []error) {
	t.Helper()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("%s: rank %d: %v", what, r, err)
		}
	}
}
