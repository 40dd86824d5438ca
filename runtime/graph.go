package runtime

import (
	"errors"
	"fmt"
	goruntime "runtime"

	"github.com/gluaproject/glua/device"
)

// Graph is work recorded once by Capture and replayed by Launch: on the
// cuda backend a CUDA graph, one launch for every kernel, copy and matmul
// the capture saw; on the CPU backend the list of those operations. It keeps the memory of every array the recorded work
// uses until it is freed, since each replay reads and writes that memory
// again; an array freed meanwhile stays "held by a graph" in the pool's
// status. On backends that cannot record work, Launch runs the captured
// function again.
type Graph struct {
	st      *graphState
	cleanup goruntime.Cleanup
}

// graphState is a Graph's resources, apart from the Graph so that the
// garbage collector's cleanup can reach them.
type graphState struct {
	rt     *Runtime
	exec   device.Graph // 0 where the backend replays by calling again
	nodes  int
	replay func() error // the captured function, where exec is 0
	held   []*buffer    // what the recorded work uses
	freed  bool
}

// capture is the graph being recorded: the buffers its work has used so
// far and the stream the runtime's work returns to afterwards.
type capture struct {
	order device.Stream
	held  map[*buffer]bool
	list  []*buffer
}

// Capture records the device work fn queues (kernels, device copies,
// matmuls) without running it, and returns it as a Graph to replay with
// Launch. Arrays fn allocates exist afterwards, their contents undefined
// until the first launch. Work that waits for the device or moves data
// to or from the host fails inside fn with a *device.CaptureError; an error
// from fn ends the capture, and the runtime and its arrays are as before.
// Captures do not nest.
func (rt *Runtime) Capture(fn func() error) (*Graph, error) {
	if err := rt.usable(); err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, badGoArgument("Capture", "fn is nil")
	}
	if rt.graphs.busy() {
		return nil, errors.New("graphs do not nest: this one is being made inside another")
	}
	gc, ok := rt.backend.(GraphCapturer)
	if !ok {
		return rt.newGraph(&graphState{rt: rt, replay: fn}), nil
	}
	cs, err := rt.captureStream()
	if err != nil {
		return nil, err
	}
	// The recording starts after the work queued so far, so that a replay,
	// launched on the runtime's stream, sees the same.
	if err := rt.follow(cs, rt.streams.own); err != nil {
		return nil, err
	}
	rt.drain()
	if err := gc.BeginCapture(cs); err != nil {
		return nil, err
	}
	c := &capture{order: rt.streams.own, held: map[*buffer]bool{}}
	rt.graphs.capture, rt.streams.own = c, cs
	var exec device.Graph
	var nodes int
	ended := false
	end := func() error {
		ended = true
		rt.graphs.capture, rt.streams.own = nil, c.order
		var err error
		exec, nodes, err = gc.EndCapture(cs)
		return err
	}
	defer func() {
		if !ended { // fn panicked: end the capture and let the panic go on
			end()
			rt.releaseCapture(c, exec)
		}
	}()
	ferr := fn()
	eerr := end()
	if ferr != nil || eerr != nil {
		rt.releaseCapture(c, exec)
		if ferr != nil {
			return nil, ferr
		}
		return nil, fmt.Errorf("ending the capture: %w", eerr)
	}
	return rt.newGraph(&graphState{rt: rt, exec: exec, nodes: nodes, held: c.list}), nil
}

// releaseCapture lets go of what a failed capture held.
func (rt *Runtime) releaseCapture(c *capture, exec device.Graph) {
	if exec != 0 {
		rt.backend.(GraphCapturer).DestroyGraph(exec)
	}
	rt.unhold(c.list)
}

// captureStream is the stream graphs are recorded on, made on first use:
// the runtime's own stream may be the default stream, which cannot be.
func (rt *Runtime) captureStream() (device.Stream, error) {
	if rt.graphs.stream != 0 {
		return rt.graphs.stream, nil
	}
	s, err := rt.NewStream()
	if err != nil {
		return 0, err
	}
	rt.graphs.stream = s.handle
	return s.handle, nil
}

// follow makes stream s wait for the work queued on stream after.
func (rt *Runtime) follow(s, after device.Stream) error {
	if rt.graphs.fork == nil {
		ev, err := rt.NewSyncEvent()
		if err != nil {
			return err
		}
		rt.graphs.fork = ev
	}
	if err := rt.backend.Record(rt.graphs.fork.handle, after); err != nil {
		return err
	}
	return rt.backend.StreamWaitEvent(s, rt.graphs.fork.handle)
}

func (rt *Runtime) newGraph(st *graphState) *Graph {
	g := &Graph{st: st}
	rt.mu.Lock()
	rt.graphs.add(st)
	rt.mu.Unlock()
	g.cleanup = goruntime.AddCleanup(g, rt.graphUnreachable, st)
	return g
}

// hold keeps b's memory for the graph being captured.
func (c *capture) hold(rt *Runtime, b *buffer) {
	if c.held[b] {
		return
	}
	c.held[b] = true
	c.list = append(c.list, b)
	rt.mu.Lock()
	b.graphs++
	rt.mu.Unlock()
}

// unhold gives up a graph's hold on each buffer, and returns to the pool
// those whose arrays were freed meanwhile and that no other graph holds.
func (rt *Runtime) unhold(list []*buffer) error {
	var errs []error
	for _, b := range list {
		rt.mu.Lock()
		b.graphs--
		orphan := b.graphs == 0 && b.orphan
		if orphan {
			b.orphan = false
			rt.graphs.adopt(b.blk.Size)
		}
		rt.mu.Unlock()
		if orphan {
			if err := rt.returnBlock(b); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Launch replays the graph on the runtime's stream, after the work queued
// before it; like a kernel launch it returns without waiting.
func (g *Graph) Launch() error {
	st := g.st
	rt := st.rt
	if err := rt.usable(); err != nil {
		return err
	}
	if st.freed {
		return errors.New("use of a freed graph")
	}
	if rt.graphs.capture != nil {
		return errors.New("a graph cannot be launched while another is being captured")
	}
	if st.replay != nil {
		rt.graphs.replaying++
		defer func() { rt.graphs.replaying-- }()
		return st.replay()
	}
	rt.drain()
	return rt.backend.(GraphCapturer).LaunchGraph(st.exec, rt.streams.own)
}

// Nodes is how many operations the recording holds (kernels, copies, and
// the kernels a matmul is made of); 0 where Launch calls the function.
func (g *Graph) Nodes() int { return g.st.nodes }

// Replays reports whether Launch runs the captured function again rather
// than a recording: on backends without graphs.
func (g *Graph) Replays() bool { return g.st.replay != nil }

// HeldBytes is the device memory the graph keeps for its work.
func (g *Graph) HeldBytes() uint64 {
	var n uint64
	for _, b := range g.st.held {
		n += b.blk.Size
	}
	return n
}

// IsFreed reports whether Free has run.
func (g *Graph) IsFreed() bool { return g.st.freed }

// Free releases the recording and the memory of the arrays freed since
// the capture; a replay in flight still completes. A second Free is
// harmless.
func (g *Graph) Free() error {
	g.cleanup.Stop()
	return g.st.rt.freeGraph(g.st)
}

func (rt *Runtime) freeGraph(st *graphState) error {
	rt.mu.Lock()
	if st.freed {
		rt.mu.Unlock()
		return nil
	}
	st.freed = true
	rt.graphs.remove(st)
	rt.mu.Unlock()
	var errs []error
	if st.exec != 0 {
		errs = append(errs, rt.backend.(GraphCapturer).DestroyGraph(st.exec))
	}
	errs = append(errs, rt.unhold(st.held))
	st.held = nil
	return errors.Join(errs...)
}

// graphUnreachable runs on the collector's goroutine: it queues st for
// drain, which frees it on the runtime's.
func (rt *Runtime) graphUnreachable(st *graphState) {
	rt.mu.Lock()
	if !rt.closed.Load() && !st.freed {
		rt.graphs.queue(st)
		rt.mem.wake()
	}
	rt.mu.Unlock()
}

// closeGraphs frees every graph at Close, after the device is idle.
func (rt *Runtime) closeGraphs() []error {
	rt.mu.Lock()
	all := rt.graphs.all()
	rt.mu.Unlock()
	var errs []error
	for _, st := range all {
		if err := rt.freeGraph(st); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// GraphMemory is what the live recorded graphs hold: how many graphs, the
// bytes of the arrays their work uses, and of those the bytes of arrays
// already freed, which only the graphs keep. Graphs that call their
// function again hold nothing and are not counted.
func (rt *Runtime) GraphMemory() (graphs int, held, orphaned uint64) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.graphs.memory()
}

// uncapturable refuses op while a graph is being captured or replayed by
// calling its function again, so that both backends refuse the same work.
func (rt *Runtime) uncapturable(op string) error {
	if !rt.graphs.busy() {
		return nil
	}
	return &device.CaptureError{Op: op}
}

// orderStream is the stream the pool orders the runtime's memory by: the
// runtime's own, also while a capture sends the work elsewhere, since
// every replay of the recording runs on the runtime's stream.
func (rt *Runtime) orderStream() device.Stream {
	return rt.graphs.orderStream(rt.streams.own)
}
