package dist

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// Op is a reduction: Sum, Prod, Max, Min or Avg.
type Op = device.ReduceOp

const (
	Sum  = device.ReduceSum
	Prod = device.ReduceProd
	Max  = device.ReduceMax
	Min  = device.ReduceMin
	// Avg is the sum divided by Size; integers truncate toward zero.
	Avg = device.ReduceAvg
)

// ParseOp turns "sum", "prod", "max", "min" or "avg" into an Op.
func ParseOp(name string) (Op, error) { return device.ParseReduceOp(name) }

// ErrNoPeer is send's and recv's error in a single process.
var ErrNoPeer = errors.New("no peer in a single process")

// Error is a failed call of a Group: Op names the call as the Lua module
// does ("all_gather"), Err says why. errors.As finds a *device.CommError
// in Err when another rank was at fault, naming it.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Options say how to join a group.
type Options struct {
	// Place is this process's place; FromEnv(os.Getenv) reads it.
	Place Place
	// Timeout bounds every wait on another rank; zero means the
	// runtime's [dist] timeout.
	Timeout time.Duration
	// Context cancels the wait for the other ranks to join.
	Context context.Context
}

// Group is this process's membership of a job's ranks, running
// collectives on one runtime's arrays. Every rank must make the same calls
// in the same order, with arrays of the same dtype and size.
type Group struct {
	rt    *runtime.Runtime
	place Place
	comm  *runtime.Comm // nil for a single process
}

// New joins the group opts.Place describes, waiting for the other ranks.
// A group of one needs neither the network nor a backend with
// collectives: its collectives leave x as it is.
func New(rt *runtime.Runtime, opts Options) (*Group, error) {
	p := opts.Place
	if p.Size == 0 {
		p = Single
	}
	if p.Size < 1 || p.Rank < 0 || p.Rank >= p.Size {
		return nil, &Error{"init", fmt.Errorf("rank %d of %d is no place", p.Rank, p.Size)}
	}
	g := &Group{rt: rt, place: p}
	if p.Size == 1 {
		return g, nil
	}
	timeout := opts.Timeout
	if timeout == 0 {
		var err error
		if timeout, err = rt.Config().DistTimeout(); err != nil {
			return nil, &Error{"init", fmt.Errorf("[dist] timeout: %w", err)}
		}
	}
	if p.MasterAddr == "" || p.MasterPort == 0 {
		return nil, &Error{"init", fmt.Errorf("%s: no address where the ranks meet (set %s=host:port, rank 0's)", p, EnvCommID)}
	}
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	addr := net.JoinHostPort(p.MasterAddr, strconv.Itoa(p.MasterPort))
	c, err := rt.OpenComm(ctx, device.CommConfig{Rank: p.Rank, Size: p.Size, Addr: addr, Timeout: timeout})
	if err != nil {
		return nil, &Error{"init", err}
	}
	g.comm = c
	return g, nil
}

// Rank, Size and LocalRank are this process's place; ranks count from 0.
func (g *Group) Rank() int      { return g.place.Rank }
func (g *Group) Size() int      { return g.place.Size }
func (g *Group) LocalRank() int { return g.place.LocalRank }

// Place is this process's place as the launcher gave it.
func (g *Group) Place() Place { return g.place }

// Close leaves the group; the runtime's Close does too.
func (g *Group) Close() error {
	if g.comm == nil {
		return nil
	}
	return g.comm.Close()
}

// AllReduce replaces x, on every rank, with its reduction over the ranks.
func (g *Group) AllReduce(x *runtime.Array, op Op) error {
	const call = "all_reduce"
	if err := g.check(call, x, "x", op); err != nil {
		return err
	}
	if g.comm == nil {
		return nil
	}
	return g.wrap(call, g.comm.AllReduce(x, op))
}

// Broadcast copies root's x into every other rank's x.
func (g *Group) Broadcast(x *runtime.Array, root int) error {
	const call = "broadcast"
	if err := g.check(call, x, "x", Sum); err != nil {
		return err
	}
	if err := g.rank(call, "root", root); err != nil {
		return err
	}
	if g.comm == nil {
		return nil
	}
	return g.wrap(call, g.comm.Broadcast(x, root))
}

// Reduce leaves in root's x the reduction over the ranks; the other
// ranks' x are unchanged.
func (g *Group) Reduce(x *runtime.Array, root int, op Op) error {
	const call = "reduce"
	if err := g.check(call, x, "x", op); err != nil {
		return err
	}
	if err := g.rank(call, "root", root); err != nil {
		return err
	}
	if g.comm == nil {
		return nil
	}
	return g.wrap(call, g.comm.Reduce(x, root, op))
}

// AllGather fills out, on every rank, with every rank's x in rank order:
// out has Size times x's elements, of x's dtype (any shape).
func (g *Group) AllGather(out, x *runtime.Array) error {
	const call = "all_gather"
	if err := g.pair(call, out, x, true); err != nil {
		return err
	}
	if g.comm == nil {
		return g.copy(call, out, x)
	}
	return g.wrap(call, g.comm.AllGather(out, x))
}

// AllGatherAsync is AllGather queued on a stream of the group's own, after
// the work queued so far, returning at once so that the runtime's later
// work runs while the data moves. Wait, or any other call of the group,
// orders the runtime's later work after it; until then neither out nor x
// may be written, nor out read. x must be apart from out or this rank's
// slice of it.
func (g *Group) AllGatherAsync(out, x *runtime.Array) error {
	const call = "all_gather"
	if err := g.pair(call, out, x, true); err != nil {
		return err
	}
	if g.comm == nil {
		return g.copy(call, out, x)
	}
	return g.wrap(call, g.comm.AllGatherAsync(out, x))
}

// Wait makes the runtime's later work wait for the asynchronous calls
// made so far (AllGatherAsync), without blocking the host.
func (g *Group) Wait() error {
	if g.comm == nil {
		return nil
	}
	return g.wrap("wait", g.comm.Wait())
}

// ReduceScatter leaves in out, on rank r, the reduction over the ranks of
// slice r of x: x has Size times out's elements.
func (g *Group) ReduceScatter(out, x *runtime.Array, op Op) error {
	const call = "reduce_scatter"
	if err := g.check(call, x, "x", op); err != nil {
		return err
	}
	if err := g.pair(call, out, x, false); err != nil {
		return err
	}
	if g.comm == nil {
		return g.copy(call, out, x)
	}
	return g.wrap(call, g.comm.ReduceScatter(out, x, op))
}

// Send sends x to peer, whose Recv takes an array of x's dtype and size.
func (g *Group) Send(x *runtime.Array, peer int) error {
	const call = "send"
	if err := g.pointToPoint(call, x, peer); err != nil {
		return err
	}
	return g.wrap(call, g.comm.Send(x, peer))
}

// Recv receives into x what peer sends.
func (g *Group) Recv(x *runtime.Array, peer int) error {
	const call = "recv"
	if err := g.pointToPoint(call, x, peer); err != nil {
		return err
	}
	return g.wrap(call, g.comm.Recv(x, peer))
}

// Barrier returns once every rank has called it.
func (g *Group) Barrier() error {
	if g.comm == nil {
		return nil
	}
	return g.wrap("barrier", g.comm.Barrier())
}

func (g *Group) wrap(call string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{call, err}
}

// check is what every call asks of an array and a reduction, here, before
// any rank is told of the call: a rank that failed only once the data
// moved would leave the others waiting for it.
func (g *Group) check(call string, x *runtime.Array, name string, op Op) error {
	switch {
	case x == nil:
		return &Error{call, fmt.Errorf("%s is nil", name)}
	case x.Runtime() != g.rt:
		return &Error{call, fmt.Errorf("%s belongs to another runtime than the group's", name)}
	case x.IsFreed():
		return &Error{call, fmt.Errorf("%s: %w", name, runtime.ErrFreed)}
	case !op.Valid():
		return &Error{call, fmt.Errorf("invalid reduction %s", op)}
	}
	return nil
}

func (g *Group) rank(call, what string, r int) error {
	if r < 0 || r >= g.Size() {
		return &Error{call, fmt.Errorf("%s %d out of range: ranks are 0 to %d", what, r, g.Size()-1)}
	}
	return nil
}

// pair checks a gather's or scatter's out and x: one dtype, and out with
// Size times x's elements for a gather, x with Size times out's for a
// scatter.
func (g *Group) pair(call string, out, x *runtime.Array, gather bool) error {
	if err := g.check(call, out, "out", Sum); err != nil {
		return err
	}
	if err := g.check(call, x, "x", Sum); err != nil {
		return err
	}
	if out.DType() != x.DType() {
		return &Error{call, fmt.Errorf("out is %s and x is %s: they must have one dtype", out.DType(), x.DType())}
	}
	n := g.Size()
	if gather && out.Size() != n*x.Size() {
		return &Error{call, fmt.Errorf("out has %d elements, want %d (%d ranks × %d of x)", out.Size(), n*x.Size(), n, x.Size())}
	}
	if !gather && x.Size() != n*out.Size() {
		return &Error{call, fmt.Errorf("x has %d elements, want %d (%d ranks × %d of out)", x.Size(), n*out.Size(), n, out.Size())}
	}
	return nil
}

func (g *Group) pointToPoint(call string, x *runtime.Array, peer int) error {
	if g.comm == nil {
		return &Error{call, ErrNoPeer}
	}
	if err := g.check(call, x, "x", Sum); err != nil {
		return err
	}
	if err := g.rank(call, "peer", peer); err != nil {
		return err
	}
	if peer == g.Rank() {
		return &Error{call, fmt.Errorf("peer %d is this rank", peer)}
	}
	return nil
}

// copy is a single process's gather or scatter: out gets x's elements.
func (g *Group) copy(call string, out, x *runtime.Array) error {
	if out == x {
		return nil
	}
	view, err := out.Reshape(x.Shape())
	if err != nil {
		return &Error{call, err}
	}
	return g.wrap(call, g.rt.Copy(view, x))
}
