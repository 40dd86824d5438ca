package jit

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// launch is one Run: the arguments and geometry every thread reads.
type launch struct {
	p       *Program
	arrays  []HostArray // by parameter index; numbers leave a zero entry
	numbers []any       // the arguments, for the number parameters
	grid    [3]int
	block   [3]int
	body    stmtFn
	failed  atomic.Pointer[Error]
	// the program's warp operations, and kernels.syncthreads's number
	// among them, for a program that uses warps
	sites    []warpSite
	syncSite int
}

// Run executes p over grid×block threads on the CPU. args holds, per
// parameter, a HostArray or a float64 (numbers). Blocks run in parallel;
// a block's threads run one after another, or, when the kernel calls
// kernels.syncthreads or uses its warps, as goroutines meeting at a
// barrier and at each warp operation (a block's warps are its threads 1
// to 32, 33 to 64, ... with x fastest, as CUDA's). Every index is
// checked; the first failure is returned.
func Run(p *Program, grid, block [3]int, args []any) error {
	l := &launch{p: p, grid: grid, block: block, arrays: make([]HostArray, len(p.Params))}
	if err := l.bind(args); err != nil {
		return err
	}
	c := &compiler{p: p}
	l.body = c.stmts(p.Body)
	l.syncSite = c.site("kernels.syncthreads", 0)
	l.sites = c.sites
	blocks := grid[0] * grid[1] * grid[2]
	var nextBlock atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), blocks); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b := int(nextBlock.Add(1) - 1)
				if b >= blocks || l.failed.Load() != nil {
					return
				}
				l.runBlock([3]int{b % grid[0], b / grid[0] % grid[1], b / (grid[0] * grid[1])})
			}
		}()
	}
	wg.Wait()
	if err := l.failed.Load(); err != nil {
		return err
	}
	return nil
}

// bind checks args against the program's signature; the runtime has
// built both from the same values, so a mismatch is a caller's bug.
func (l *launch) bind(args []any) error {
	if len(args) != len(l.p.Params) {
		return fmt.Errorf("jit: %d arguments for %d parameters", len(args), len(l.p.Params))
	}
	for i, prm := range l.p.Params {
		if prm.Array == nil {
			if _, ok := args[i].(float64); !ok {
				return fmt.Errorf("jit: argument %d is %T, not a number", i+1, args[i])
			}
			continue
		}
		a, ok := args[i].(HostArray)
		if !ok || a.DType != prm.Array.DType || len(a.Shape) != prm.Array.Rank {
			return fmt.Errorf("jit: argument %d does not match the signature %s", i+1, l.p.Signature)
		}
		l.arrays[i] = a
	}
	l.numbers = args
	return nil
}

// runBlock runs one block's threads.
func (l *launch) runBlock(bid [3]int) {
	shared := make([][]byte, len(l.p.Shared))
	for i, a := range l.p.Shared {
		shared[i] = make([]byte, a.Size*a.DType.Size())
	}
	n := l.block[0] * l.block[1] * l.block[2]
	tid := func(i int) [3]int {
		return [3]int{i % l.block[0], i / l.block[0] % l.block[1], i / (l.block[0] * l.block[1])}
	}
	if !l.p.UsesSync && !l.p.UsesWarp {
		t := l.newThread(bid, shared, nil)
		for i := 0; i < n && l.failed.Load() == nil; i++ {
			t.reset(tid(i))
			l.runThread(t)
		}
		return
	}
	var b *barrier
	if l.p.UsesSync {
		b = newBarrier(n)
	}
	var warps []*warp
	if l.p.UsesWarp {
		for w := 0; w < n; w += WarpSize {
			warps = append(warps, newWarp(l, min(WarpSize, n-w)))
		}
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		t := l.newThread(bid, shared, b)
		t.reset(tid(i))
		if warps != nil {
			t.warp, t.lane = warps[i/WarpSize], i%WarpSize
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if b != nil {
				defer b.leave()
			}
			if t.warp != nil {
				defer t.warp.leave()
			}
			l.runThread(t)
		}()
	}
	wg.Wait()
}

func (l *launch) newThread(bid [3]int, shared [][]byte, b *barrier) *thread {
	n := len(l.p.Locals)
	local := make([][]byte, len(l.p.LocalArrays))
	for i, a := range l.p.LocalArrays {
		local[i] = make([]byte, a.Size*a.DType.Size())
	}
	return &thread{ints: make([]int64, n), floats: make([]float64, n), bools: make([]bool, n),
		bid: bid, run: l, shared: shared, block: b, local: local}
}

// reset starts a thread: locals zeroed, as the translation declares them,
// and the number parameters set.
func (t *thread) reset(tid [3]int) {
	t.tid = tid
	clear(t.ints)
	clear(t.floats)
	clear(t.bools)
	for _, a := range t.local {
		clear(a)
	}
	for i, prm := range t.run.p.Params {
		if prm.Array != nil {
			continue
		}
		v := t.run.numbers[i].(float64)
		if t.run.p.Locals[prm.Slot].Type == Int {
			t.ints[prm.Slot] = int64(v)
		} else {
			t.floats[prm.Slot] = v
		}
	}
}

// runThread runs the body, turning a failure into the launch's error.
func (l *launch) runThread(t *thread) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		e, ok := r.(runError)
		if !ok {
			e = runError{&Error{Chunk: l.p.Chunk, Line: l.p.Line, Msg: fmt.Sprintf("kernel failed: %v", r)}}
		}
		l.failed.CompareAndSwap(nil, e.err)
	}()
	l.body(t)
}

// barrier is kernels.syncthreads for a block's goroutines. A thread that
// has finished leaves it, so the others are not kept waiting for it (the
// GPU counts exited threads as arrived too).
type barrier struct {
	mu         sync.Mutex
	cond       *sync.Cond
	n, arrived int
	generation uint64
}

func newBarrier(n int) *barrier {
	b := &barrier{n: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *barrier) wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	gen := b.generation
	b.arrived++
	if b.arrived >= b.n {
		b.release()
		return
	}
	for gen == b.generation {
		b.cond.Wait()
	}
}

func (b *barrier) leave() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n--
	if b.arrived > 0 && b.arrived >= b.n {
		b.release()
	}
}

func (b *barrier) release() {
	b.arrived = 0
	b.generation++
	b.cond.Broadcast()
}
