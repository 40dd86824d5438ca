package cpu

import (
	"context"
	"errors"
	"fmt"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/ring"
)

// OpenComm joins a group of processes over local TCP (internal/ring): the
// CPU backend's collectives, the test stand-in for NCCL. It is correct,
// not fast.
func (b *Backend) OpenComm(ctx context.Context, cfg device.CommConfig) (device.Comm, error) {
	c, err := ring.Dial(ctx, ring.Config{Rank: cfg.Rank, Size: cfg.Size, Addr: cfg.Addr, Timeout: cfg.Timeout})
	if err != nil {
		return nil, commError(err)
	}
	return &comm{b: b, ring: c}, nil
}

// comm runs the ring's collectives on the host views of device pointers.
type comm struct {
	b    *Backend
	ring *ring.Comm
}

// bytes is the host view of count elements of dt at p, after the work
// queued on s: the CPU backend runs everything at once, but a collective
// keeps the contract that it sees what came before it on its stream.
func (c *comm) bytes(what string, p device.Ptr, count int, dt device.DType, s device.Stream) ([]byte, error) {
	if err := c.b.StreamSynchronize(s); err != nil {
		return nil, err
	}
	if !dt.Valid() || count < 0 {
		return nil, fmt.Errorf("%s: %d elements of %s", what, count, dt)
	}
	n := uint64(count) * uint64(dt.Size())
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	v, ok := c.b.view(p, n)
	if !ok {
		return nil, fmt.Errorf("%s: %d bytes at %#x are not live memory of this backend", what, n, uint64(p))
	}
	return v, nil
}

// follow notes a collective's use of device memory as work on s in the
// streams' order (order.go), or refuses it, before the ring call: on a
// GPU, NCCL runs it on s, after what s waited for and no more.
func (c *comm) follow(op string, s device.Stream, uses ...use) error {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	return c.b.follow(op, s, uses...)
}

// rooted is how a collective with a root uses buf: the root's is read
// and the others' written (broadcast), or the other way round (reduce).
func (c *comm) rooted(buf device.Ptr, n int, root int, rootWrites bool) use {
	return use{"buf", buf, uint64(n), (c.ring.Rank() == root) == rootWrites}
}

// ringOp refuses an unknown op here, before the ring call, which would
// stop every rank's group for it.
func ringOp(op device.ReduceOp) (ring.Op, error) {
	if !op.Valid() {
		return op, fmt.Errorf("invalid reduction %s", op)
	}
	return op, nil
}

func (c *comm) AllReduce(buf device.Ptr, count int, dt device.DType, op device.ReduceOp, s device.Stream) error {
	b, err := c.bytes("buf", buf, count, dt, s)
	if err != nil {
		return err
	}
	o, err := ringOp(op)
	if err != nil {
		return err
	}
	if err := c.follow("all_reduce", s, use{"buf", buf, uint64(len(b)), true}); err != nil {
		return err
	}
	return commError(c.ring.AllReduce(b, dt, o))
}

func (c *comm) Broadcast(buf device.Ptr, count int, dt device.DType, root int, s device.Stream) error {
	b, err := c.bytes("buf", buf, count, dt, s)
	if err != nil {
		return err
	}
	if err := c.follow("broadcast", s, c.rooted(buf, len(b), root, false)); err != nil {
		return err
	}
	return commError(c.ring.Broadcast(b, root))
}

func (c *comm) Reduce(buf device.Ptr, count int, dt device.DType, op device.ReduceOp, root int, s device.Stream) error {
	b, err := c.bytes("buf", buf, count, dt, s)
	if err != nil {
		return err
	}
	o, err := ringOp(op)
	if err != nil {
		return err
	}
	if err := c.follow("reduce", s, c.rooted(buf, len(b), root, true)); err != nil {
		return err
	}
	return commError(c.ring.Reduce(b, dt, o, root))
}

func (c *comm) AllGather(out, in device.Ptr, count int, dt device.DType, s device.Stream) error {
	ob, err := c.bytes("out", out, count*c.ring.Size(), dt, s)
	if err != nil {
		return err
	}
	ib, err := c.bytes("in", in, count, dt, s)
	if err != nil {
		return err
	}
	if err := c.follow("all_gather", s, use{"in", in, uint64(len(ib)), false}, use{"out", out, uint64(len(ob)), true}); err != nil {
		return err
	}
	return commError(c.ring.AllGather(ob, ib))
}

func (c *comm) ReduceScatter(out, in device.Ptr, count int, dt device.DType, op device.ReduceOp, s device.Stream) error {
	ob, err := c.bytes("out", out, count, dt, s)
	if err != nil {
		return err
	}
	ib, err := c.bytes("in", in, count*c.ring.Size(), dt, s)
	if err != nil {
		return err
	}
	o, err := ringOp(op)
	if err != nil {
		return err
	}
	if err := c.follow("reduce_scatter", s, use{"in", in, uint64(len(ib)), false}, use{"out", out, uint64(len(ob)), true}); err != nil {
		return err
	}
	return commError(c.ring.ReduceScatter(ob, ib, dt, o))
}

func (c *comm) Send(buf device.Ptr, count int, dt device.DType, peer int, s device.Stream) error {
	b, err := c.bytes("buf", buf, count, dt, s)
	if err != nil {
		return err
	}
	if err := c.follow("send", s, use{"buf", buf, uint64(len(b)), false}); err != nil {
		return err
	}
	return commError(c.ring.Send(b, peer))
}

func (c *comm) Recv(buf device.Ptr, count int, dt device.DType, peer int, s device.Stream) error {
	b, err := c.bytes("buf", buf, count, dt, s)
	if err != nil {
		return err
	}
	if err := c.follow("recv", s, use{"buf", buf, uint64(len(b)), true}); err != nil {
		return err
	}
	return commError(c.ring.Recv(b, peer))
}

func (c *comm) Barrier(s device.Stream) error {
	if err := c.b.StreamSynchronize(s); err != nil {
		return err
	}
	return commError(c.ring.Barrier())
}

func (c *comm) Close() error { return c.ring.Close() }

// Abort is Close: the ring's Close waits for nothing, and the others see
// the connections close at once.
func (c *comm) Abort() error { return c.ring.Close() }

// commError turns the ring's error, which names its call, into the
// device's, which names the rank at fault and leaves naming the call to
// the caller.
func commError(err error) error {
	var re *ring.Error
	if errors.As(err, &re) {
		return &device.CommError{Rank: re.Rank, Msg: re.Msg}
	}
	return err
}
