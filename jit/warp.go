package jit

import (
	"fmt"
	"math"
	"sync"
)

// WarpSize is kernels.warpsize, the lanes of a warp: 32 on every NVIDIA
// GPU glua runs on (CU_DEVICE_ATTRIBUTE_WARP_SIZE).
const WarpSize = 32

// warpSite is a warp operation of the program, where a warp's lanes meet:
// a shuffle, kernels.syncwarp or kernels.syncthreads.
type warpSite struct {
	what string // the call, as messages name it
	line int    // 0 for kernels.syncthreads, which has no line
	sync bool   // kernels.syncwarp: any two of them meet, as on the GPU
}

// site numbers a warp operation for the evaluator (from 1; 0 means a lane
// has not arrived).
func (c *compiler) site(what string, line int) int {
	c.sites = append(c.sites, warpSite{what: what, line: line, sync: what == "kernels.syncwarp"})
	return len(c.sites)
}

// meet reports whether lanes at sites a and b may meet: at the same
// operation, or at two kernels.syncwarp.
func (l *launch) meet(a, b int) bool { return a == b || l.sites[a-1].sync && l.sites[b-1].sync }

// warp is one warp of a block on the CPU. Its lanes are goroutines that
// meet at each shuffle, kernels.syncwarp and kernels.syncthreads, as a
// GPU warp runs them in step: each lane leaves its value, the last to
// arrive releases them all, and each reads the value of the lane it asked
// for. A lane that returns leaves the warp, so the others are not kept
// waiting for it. Values are kept per generation, alternately in two
// buffers: a lane reads the generation it arrived at while the others may
// already be arriving at the next.
type warp struct {
	run     *launch
	mu      sync.Mutex
	cond    *sync.Cond
	lanes   int // the lanes the block gives this warp: fewer than 32 in a last, partial warp
	live    int // lanes still running
	arrived int
	gen     uint64
	vals    [2][WarpSize]uint64
	at      [2][WarpSize]int // each lane's site at the generation; 0: not there
	src     [2][WarpSize]int // the lane each lane reads
	err     *Error
}

func newWarp(l *launch, lanes int) *warp {
	w := &warp{run: l, lanes: lanes, live: lanes}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// exchange is t's arrival at site with the value v. It waits for every
// running lane of the warp and returns the value lane src (0-based)
// arrived with; src outside the warp's 32 lanes gives v back, as a GPU
// shuffle gives a lane whose source is past the warp its own value. A
// source lane that is not at the same operation fails the whole warp,
// with the error of its first such lane.
func (w *warp) exchange(t *thread, site int, v uint64, src int) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	g, gen := w.gen&1, w.gen
	if src < 0 || src >= WarpSize {
		src = t.lane
	}
	w.vals[g][t.lane], w.at[g][t.lane], w.src[g][t.lane] = v, site, src
	w.arrived++
	if w.arrived >= w.live {
		w.release()
	} else {
		for gen == w.gen && w.err == nil {
			w.cond.Wait()
		}
	}
	if w.err != nil {
		panic(runError{w.err})
	}
	return w.vals[g][src]
}

// leave takes a lane that has returned out of the warp.
func (w *warp) leave() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.live--
	if w.arrived > 0 && w.arrived >= w.live {
		w.release()
	}
}

// release ends a generation once every running lane has arrived, failing
// the warp if they arrived at operations that do not meet, or a lane
// reads one that is not there: on the GPU that is undefined behaviour
// (a hang, or any value), here an error.
func (w *warp) release() {
	g := w.gen & 1
	first := 0
	for lane := 0; lane < w.lanes; lane++ {
		s := w.at[g][lane]
		if s == 0 {
			continue
		}
		if first == 0 {
			first = s
		} else if !w.run.meet(first, s) && w.err == nil {
			a, b := w.run.sites[first-1], w.run.sites[s-1]
			w.err = &Error{Chunk: w.run.p.Chunk, Line: max(a.line, b.line), Msg: fmt.Sprintf(
				"the lanes of a warp reached different warp operations (%s and %s); every lane of a warp that has not returned must reach each shuffle, kernels.syncwarp and kernels.syncthreads together",
				siteText(a), siteText(b))}
		}
	}
	for lane := 0; lane < w.lanes && w.err == nil; lane++ {
		if s, src := w.at[g][lane], w.src[g][lane]; s != 0 && w.at[g][src] != s {
			w.err = w.absent(lane, s, src)
		}
	}
	w.arrived = 0
	w.gen++
	// the buffer of the generation after this one: every lane that read
	// it two generations ago has arrived here since
	clear(w.at[w.gen&1][:])
	w.cond.Broadcast()
}

func siteText(s warpSite) string {
	if s.line == 0 {
		return s.what
	}
	return fmt.Sprintf("%s at line %d", s.what, s.line)
}

// absent is the error of a shuffle whose source lane is not at it: the
// GPU gives an undefined value there.
func (w *warp) absent(lane, site, src int) *Error {
	s, b := w.run.sites[site-1], w.run.block
	why := "has returned"
	if src >= w.lanes {
		why = fmt.Sprintf("is not in the block (a block of %d threads leaves its last warp %d lanes)", b[0]*b[1]*b[2], w.lanes)
	}
	return &Error{Chunk: w.run.p.Chunk, Line: s.line, Msg: fmt.Sprintf(
		"%s: lane %d reads lane %d, which %s; CUDA leaves that value undefined",
		s.what, lane+1, src+1, why)}
}

// shfl evaluates a shuffle: the lane's value as bits, exchanged with its
// warp for the source lane's.
func (c *compiler) shfl(ex *Shfl) func(*thread) uint64 {
	var x func(*thread) uint64
	if ex.X.Type() == Int {
		f := c.int(ex.X)
		x = func(t *thread) uint64 { return uint64(f(t)) }
	} else {
		f := c.float(ex.X)
		x = func(t *thread) uint64 { return math.Float64bits(f(t)) }
	}
	by := c.int(ex.By)
	site := c.site("kernels.shfl_"+ex.Op, ex.Line)
	xor := ex.Op == "xor"
	return func(t *thread) uint64 {
		v, k := x(t), by(t)
		src := -1 // outside the warp: the lane's own value
		switch {
		case xor && k >= 0 && k < WarpSize:
			src = t.lane ^ int(k)
		case !xor && k >= 0 && k < WarpSize:
			src = t.lane + int(k)
		}
		return t.warp.exchange(t, site, v, src)
	}
}

// syncThreads is kernels.syncthreads: where the kernel also uses its
// warps, the lanes of each warp meet first, so that a lane waiting at the
// block's barrier while another of its warp waits at a shuffle is an
// error rather than a hang.
func (t *thread) syncThreads() {
	if t.warp != nil {
		t.warp.exchange(t, t.run.syncSite, 0, -1)
	}
	t.block.wait()
}
