package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gluaproject/glua/device"
)

// Comm is this runtime's end of a group of processes, over its arrays:
// the backend's communicator (Collectives) with each array turned into its
// device memory and each call ordered on the runtime's stream, like its
// kernels. Package dist builds the user's API on it; the checks here are
// the ones memory safety needs, since the backend gets raw pointers.
type Comm struct {
	rt         *Runtime
	comm       device.Comm
	rank, size int
	closeOnce  sync.Once
	closeErr   error

	// The asynchronous calls' stream, made on first use, and events: ready
	// marks the runtime's stream before a call, done the end of the
	// latest; pending says the runtime's stream has not waited for it yet.
	side        *Stream
	ready, done *Event
	pending     bool
}

// OpenComm joins the group that cfg describes on this runtime's backend.
// It fails at once when the backend has no collectives (Collectives), and
// after cfg.Timeout when the other ranks do not all come.
func (rt *Runtime) OpenComm(ctx context.Context, cfg device.CommConfig) (*Comm, error) {
	if err := rt.usable(); err != nil {
		return nil, err
	}
	col, ok := rt.backend.(Collectives)
	if !ok {
		return nil, fmt.Errorf("the %s backend has no collectives between processes", rt.backend.Name())
	}
	c, err := col.OpenComm(ctx, cfg)
	if err != nil {
		return nil, err
	}
	comm := &Comm{rt: rt, comm: c, rank: cfg.Rank, size: cfg.Size}
	rt.comms.add(comm)
	return comm, nil
}

// commMemory is implemented by communicators that hold device memory of
// their own, outside the pool (NCCL's buffers); Status shows it.
type commMemory interface {
	DeviceBytes() uint64
}

// CommBytes is the device memory this runtime's open groups hold outside
// the pool.
func (rt *Runtime) CommBytes() uint64 { return rt.comms.deviceBytes() }

// Rank and Size are this process's place in the group.
func (c *Comm) Rank() int { return c.rank }
func (c *Comm) Size() int { return c.size }

// begin is what a collective on one buffer does first: it checks that
// no graph is being recorded (a collective cannot be captured) and that x
// is live, and has the stream wait for the asynchronous gathers queued
// before (Wait).
func (c *Comm) begin(x *Array) error {
	if err := c.rt.uncapturable("a collective"); err != nil {
		return err
	}
	if err := x.live(c.rt, "x"); err != nil {
		return err
	}
	return c.Wait()
}

// AllReduce reduces x over the ranks, in place.
func (c *Comm) AllReduce(x *Array, op device.ReduceOp) error {
	if err := c.begin(x); err != nil {
		return err
	}
	return c.comm.AllReduce(x.ptr(), x.size, x.dtype, op, c.rt.streams.own)
}

// Broadcast copies root's x into every rank's x.
func (c *Comm) Broadcast(x *Array, root int) error {
	if err := c.begin(x); err != nil {
		return err
	}
	return c.comm.Broadcast(x.ptr(), x.size, x.dtype, root, c.rt.streams.own)
}

// Reduce leaves the reduction over the ranks in root's x.
func (c *Comm) Reduce(x *Array, root int, op device.ReduceOp) error {
	if err := c.begin(x); err != nil {
		return err
	}
	return c.comm.Reduce(x.ptr(), x.size, x.dtype, op, root, c.rt.streams.own)
}

// AllGather fills out, Size times x's elements, with every rank's x. x
// may be this rank's slice of out (in place, as NCCL allows) or overlap
// out otherwise: out gets every rank's x as it was before the call.
func (c *Comm) AllGather(out, x *Array) error {
	if err := c.rt.uncapturable("a collective"); err != nil {
		return err
	}
	if err := c.pair(out, x, c.size, 1); err != nil {
		return err
	}
	if err := c.Wait(); err != nil {
		return err
	}
	gather := func(out *Array) error { return c.comm.AllGather(out.ptr(), x.ptr(), x.size, x.dtype, c.rt.streams.own) }
	if partlyOverlaps(out, x) && !sliceOf(x, out, c.rank) {
		return c.rt.throughTemporary(out, "out", x, "x", gather)
	}
	return gather(out)
}

// ReduceScatter leaves in out, on rank r, the reduction of slice r of
// every rank's x, which holds Size times out's elements. out may be this
// rank's slice of x (in place, as NCCL allows) or overlap x otherwise: it
// gets the reduction of every rank's x as it was before the call.
func (c *Comm) ReduceScatter(out, x *Array, op device.ReduceOp) error {
	if err := c.rt.uncapturable("a collective"); err != nil {
		return err
	}
	if err := c.pair(out, x, 1, c.size); err != nil {
		return err
	}
	if err := c.Wait(); err != nil {
		return err
	}
	scatter := func(out *Array) error {
		return c.comm.ReduceScatter(out.ptr(), x.ptr(), out.size, x.dtype, op, c.rt.streams.own)
	}
	if partlyOverlaps(out, x) && !sliceOf(out, x, c.rank) {
		return c.rt.throughTemporary(out, "out", x, "x", scatter)
	}
	return scatter(out)
}

// AllGatherAsync is AllGather queued on a stream of the group's own after
// the work queued so far on the runtime's stream, returning at once, so
// that the runtime's later work (the next block's product) runs while
// the data moves. Wait makes the runtime's stream wait for it; every
// other call of the group waits first too. Until then neither out nor x
// may be written, nor out read; the pool keeps their memory from other
// work meanwhile, even if they are freed. x must be apart from out or
// this rank's slice of it.
func (c *Comm) AllGatherAsync(out, x *Array) error {
	rt := c.rt
	if err := rt.uncapturable("a collective"); err != nil {
		return err
	}
	if err := c.pair(out, x, c.size, 1); err != nil {
		return err
	}
	if partlyOverlaps(out, x) && !sliceOf(x, out, c.rank) {
		return errors.New("out and x overlap: an asynchronous gather needs x apart from out, or this rank's slice of it")
	}
	if c.side == nil {
		side, err := rt.newPriorityStream()
		if err != nil {
			return err
		}
		if c.ready, err = rt.NewSyncEvent(); err != nil {
			return err
		}
		if c.done, err = rt.NewSyncEvent(); err != nil {
			return err
		}
		c.side = side
	}
	if err := c.ready.Record(nil); err != nil {
		return err
	}
	if err := rt.StreamWait(c.side, c.ready); err != nil {
		return err
	}
	rt.pool.RecordStream(&out.buf.blk, c.side.handle)
	rt.pool.RecordStream(&x.buf.blk, c.side.handle)
	if err := c.comm.AllGather(out.ptr(), x.ptr(), x.size, x.dtype, c.side.handle); err != nil {
		return err
	}
	c.pending = true
	return c.done.Record(c.side)
}

// Wait makes the work queued on the runtime's stream from now on wait for
// the asynchronous calls made so far, without blocking the host.
func (c *Comm) Wait() error {
	if !c.pending {
		return nil
	}
	if err := c.rt.StreamWait(nil, c.done); err != nil {
		return err
	}
	c.pending = false
	return nil
}

// sliceOf reports whether part is slice r of whole, cut in slices of
// part's size: the one overlap NCCL defines for a gather or a scatter,
// which the CPU backend's ring also runs in place. Any other overlap
// would have the collective read elements it has already written.
func sliceOf(part, whole *Array, r int) bool {
	return part.buf == whole.buf && part.offset == whole.offset+uint64(r)*part.NBytes()
}

// pair checks out and x for a gather or scatter: live, one dtype, and
// out.size×xTimes = x.size×outTimes, so that the backend stays inside both.
func (c *Comm) pair(out, x *Array, outTimes, xTimes int) error {
	if err := out.live(c.rt, "out"); err != nil {
		return err
	}
	if err := x.live(c.rt, "x"); err != nil {
		return err
	}
	if out.dtype != x.dtype {
		return fmt.Errorf("out is %s and x is %s: they must have one dtype", out.dtype, x.dtype)
	}
	if out.size*xTimes != x.size*outTimes {
		return fmt.Errorf("out has %d elements and x %d: want out = %d × x's", out.size, x.size, outTimes)
	}
	return nil
}

// Send sends x to peer, whose Recv takes as many elements of its dtype.
func (c *Comm) Send(x *Array, peer int) error {
	if err := c.begin(x); err != nil {
		return err
	}
	return c.comm.Send(x.ptr(), x.size, x.dtype, peer, c.rt.streams.own)
}

// Recv receives into x what peer sends.
func (c *Comm) Recv(x *Array, peer int) error {
	if err := c.begin(x); err != nil {
		return err
	}
	return c.comm.Recv(x.ptr(), x.size, x.dtype, peer, c.rt.streams.own)
}

// Barrier returns once every rank has called it.
func (c *Comm) Barrier() error {
	if err := c.rt.uncapturable("a collective"); err != nil {
		return err
	}
	if err := c.rt.usable(); err != nil {
		return err
	}
	if err := c.Wait(); err != nil {
		return err
	}
	return c.comm.Barrier(c.rt.streams.own)
}

// Close leaves the group. Runtime.Close closes the comms still open, so
// that a rank whose runtime ends tells the others rather than vanishing.
func (c *Comm) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = errors.Join(c.Wait(), c.comm.Close())
		c.forget()
	})
	return c.closeErr
}

// Abort leaves the group at once where the backend can (device.CommAborter:
// NCCL's ncclCommAbort), else as Close does; the other ranks learn that
// this one is gone. A program whose work failed leaves so.
func (c *Comm) Abort() error {
	a, ok := c.comm.(device.CommAborter)
	if !ok {
		return c.Close()
	}
	c.closeOnce.Do(func() {
		c.closeErr = a.Abort()
		c.forget()
	})
	return c.closeErr
}

// forget drops c from its runtime's open comms.
func (c *Comm) forget() { c.rt.comms.forget(c) }

// AbortComms leaves every group this runtime is in at once (Comm.Abort),
// before a Close that would wait for the collectives queued: glua calls
// it when a script failed, so that the other ranks end within seconds
// instead of at their timeout.
func (rt *Runtime) AbortComms() error { return rt.comms.abort() }
