package cpu

import (
	"errors"
	"fmt"

	"github.com/gluaproject/glua/device"
)

// A graph on the CPU backend is the list of operations queued on a stream
// between BeginCapture and EndCapture, each a function over the same
// memory, which LaunchGraph runs in order: like a CUDA graph it does the
// same work on the same buffers at each launch, and the capture runs
// nothing. Copies, memsets and matrix products queued on the stream are
// recorded here; the runtime's kernels, which run on the host memory
// directly, join the recording through Run.

// recording is one stream's capture in progress, or a finished graph:
// its operations, and for each its name and the device bytes it uses,
// which a launch notes in the streams' order (order.go) as the work of
// the stream it runs on.
type recording struct {
	ops   []func() error
	names []string
	uses  [][]use
}

// add records op, named name, using uses.
func (r *recording) add(name string, op func() error, uses ...use) {
	r.ops = append(r.ops, op)
	r.names = append(r.names, name)
	r.uses = append(r.uses, uses)
}

// BeginCapture starts recording the work queued on s.
func (b *Backend) BeginCapture(s device.Stream) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.checkStream("begin capture", s); err != nil {
		return err
	}
	if s == 0 {
		return errors.New("begin capture: the default stream cannot be captured; capture on a stream from NewStream")
	}
	if b.captures[s] != nil {
		return fmt.Errorf("begin capture: stream %d is already recording", s)
	}
	if b.captures == nil {
		b.captures = map[device.Stream]*recording{}
	}
	b.captures[s] = &recording{}
	return nil
}

// EndCapture stops recording on s and returns the recording as a graph.
func (b *Backend) EndCapture(s device.Stream) (device.Graph, int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rec := b.captures[s]
	if rec == nil {
		return 0, 0, fmt.Errorf("end capture: stream %d is not recording", s)
	}
	delete(b.captures, s)
	if b.closed {
		return 0, 0, fmt.Errorf("end capture: %w", errClosed)
	}
	if b.graphs == nil {
		b.graphs = map[device.Graph]*recording{}
	}
	b.nextGraph++
	g := b.nextGraph
	b.graphs[g] = rec
	return g, len(rec.ops), nil
}

// LaunchGraph runs g's operations in order, each as work on s that the
// streams' order follows; the first that fails, or that touches memory
// another stream's unordered work uses, ends the replay with its error.
func (b *Backend) LaunchGraph(g device.Graph, s device.Stream) error {
	b.mu.Lock()
	err := b.checkStream("launch graph", s)
	rec := b.graphs[g]
	if err == nil && rec == nil {
		err = fmt.Errorf("launch graph: graph %d is not a live graph", g)
	}
	if err == nil && b.captures[s] != nil {
		err = &device.CaptureError{Op: "a graph launch"}
	}
	b.mu.Unlock()
	if err != nil {
		return err
	}
	for i, op := range rec.ops {
		// The operation is followed here, as s's; what it calls to run
		// (on stream 0) is not followed again.
		b.mu.Lock()
		err := b.follow(rec.names[i], s, rec.uses[i]...)
		if err == nil {
			b.order.replaying++
		}
		b.mu.Unlock()
		if err != nil {
			return err
		}
		err = op()
		b.mu.Lock()
		b.order.replaying--
		b.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// DestroyGraph forgets g.
func (b *Backend) DestroyGraph(g device.Graph) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.graphs[g] == nil {
		return fmt.Errorf("destroy graph: graph %d is not a live graph", g)
	}
	delete(b.graphs, g)
	return nil
}

// Run runs op, work on the backend's memory queued on stream s, now, or,
// while s records a graph, adds it to the recording to run at each
// launch instead. Run refuses op when one of its uses conflicts with
// another stream's work that nothing orders before it (order.go).
func (b *Backend) Run(s device.Stream, op func() error, uses ...device.Access) error {
	b.mu.Lock()
	err := b.checkStream("run", s)
	rec := b.captures[s]
	us := make([]use, len(uses))
	for i, u := range uses {
		us[i] = use{u.What, u.P, u.N, u.Write}
	}
	if err == nil && rec != nil {
		rec.add("kernel", op, us...)
	}
	if err == nil && rec == nil && len(uses) > 0 {
		err = b.follow("kernel", s, us...)
	}
	b.mu.Unlock()
	if err != nil || rec != nil {
		return err
	}
	return op()
}

// recorded adds op, named name and using uses, to s's recording and
// reports true when s records a graph; otherwise the caller runs the
// operation now. check, run under b.mu, refuses at the capture what the
// operation would refuse.
func (b *Backend) recorded(s device.Stream, name string, uses []use, check func() error, op func() error) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rec := b.captures[s]
	if rec == nil {
		return false, nil
	}
	if err := check(); err != nil {
		return true, err
	}
	rec.add(name, op, uses...)
	return true, nil
}

// refuseInCapture is the error for a transfer between host and device on
// a stream that records: the host memory may be gone by a replay.
func (b *Backend) refuseInCapture(op string, s device.Stream) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.captures[s] != nil {
		return &device.CaptureError{Op: op}
	}
	return nil
}
