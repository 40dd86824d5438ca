package ring

import (
	"fmt"
	"github.com/gluaproject/glua/internal/callhead"

	"github.com/gluaproject/glua/device"
)

// checkBuf returns the number of elements of dt in buf.
func checkBuf(what string, buf []byte, dt device.DType) (int, error) {
	if !dt.Valid() {
		return 0, fmt.Errorf("invalid dtype %s", dt)
	}
	if len(buf)%dt.Size() != 0 {
		return 0, fmt.Errorf("%s holds %d bytes, not a whole number of %s elements (%d bytes each)", what, len(buf), dt, dt.Size())
	}
	return len(buf) / dt.Size(), nil
}

func (c *Comm) checkRoot(what string, root int) error {
	if root < 0 || root >= c.size {
		return fmt.Errorf("%s %d out of range: ranks are 0 to %d", what, root, c.size-1)
	}
	return nil
}

// AllReduce replaces buf, on every rank, with the reduction over ranks of
// every rank's buf. It is a ring reduce-scatter then a ring all-gather, so
// each element is reduced in one fixed order for a given Size: element e of
// block b (the Size near-equal blocks of buf) starts at rank b+1 and gathers
// ranks b+2, …, b in turn.
func (c *Comm) AllReduce(buf []byte, dt device.DType, op Op) error {
	k, err := c.begin("all_reduce")
	if err != nil {
		return err
	}
	return k.end(k.allReduce(buf, dt, op))
}

func (k *call) allReduce(buf []byte, dt device.DType, op Op) error {
	n, err := checkBuf("buf", buf, dt)
	if err != nil {
		return err
	}
	if !op.Valid() {
		return fmt.Errorf("invalid reduction %s", op)
	}
	if err := k.agree(header{Kind: callhead.AllReduce, DType: dt, Op: op, Root: -1, Count: uint64(n)}); err != nil {
		return err
	}
	size, es := k.c.size, dt.Size()
	block := func(b int) []byte { return buf[b*n/size*es : (b+1)*n/size*es] }
	scratch := make([]byte, (n+size-1)/size*es)
	if err := k.reduceScatterRing(block, dt, op, scratch); err != nil {
		return err
	}
	if op == Avg {
		// Every rank divides its own finished block, so the quotient
		// travels in the gather and all ranks hold the same bits.
		finishAvg(dt, block(k.c.rank), size)
	}
	return k.allGatherRing(block)
}

// reduceScatterRing leaves in block(r), on rank r, the reduction of every
// rank's block(r). In step s rank r sends block r-s-1 (its partial sum) on
// and folds block r-s-2 from its predecessor into its own.
func (k *call) reduceScatterRing(block func(int) []byte, dt device.DType, op Op, scratch []byte) error {
	c := k.c
	for s := 0; s < c.size-1; s++ {
		out, in := block(mod(c.rank-s-1, c.size)), block(mod(c.rank-s-2, c.size))
		tmp := scratch[:len(in)]
		if _, err := k.exchange(frameData, c.next(), out, c.prev(), tmp); err != nil {
			return err
		}
		combine(dt, op, in, tmp)
	}
	return nil
}

// allGatherRing spreads block(r), finished on rank r, to every rank.
func (k *call) allGatherRing(block func(int) []byte) error {
	c := k.c
	for s := 0; s < c.size-1; s++ {
		out, in := block(mod(c.rank-s, c.size)), block(mod(c.rank-s-1, c.size))
		if _, err := k.exchange(frameData, c.next(), out, c.prev(), in); err != nil {
			return err
		}
	}
	return nil
}

// Broadcast copies root's buf into every other rank's buf. The data goes
// around the ring from root, each rank passing it on to the next.
func (c *Comm) Broadcast(buf []byte, root int) error {
	k, err := c.begin("broadcast")
	if err != nil {
		return err
	}
	return k.end(k.broadcast(buf, root))
}

func (k *call) broadcast(buf []byte, root int) error {
	c := k.c
	if err := c.checkRoot("root", root); err != nil {
		return err
	}
	if err := k.agree(header{Kind: callhead.Broadcast, Root: int32(root), Count: uint64(len(buf))}); err != nil {
		return err
	}
	if c.size == 1 {
		return nil
	}
	if c.rank != root {
		if _, err := k.recv(c.prev(), frameData, buf); err != nil {
			return err
		}
	}
	if c.next().rank != root {
		return k.send(c.next(), frameData, buf)
	}
	return nil
}

// Reduce leaves in root's buf the reduction of every rank's buf; the
// others' bufs are unchanged. The partial result travels once around the
// ring from root+1 to root, so the order is root+1, root+2, …, root.
func (c *Comm) Reduce(buf []byte, dt device.DType, op Op, root int) error {
	k, err := c.begin("reduce")
	if err != nil {
		return err
	}
	return k.end(k.reduce(buf, dt, op, root))
}

func (k *call) reduce(buf []byte, dt device.DType, op Op, root int) error {
	c := k.c
	n, err := checkBuf("buf", buf, dt)
	if err != nil {
		return err
	}
	if !op.Valid() {
		return fmt.Errorf("invalid reduction %s", op)
	}
	if err := c.checkRoot("root", root); err != nil {
		return err
	}
	if err := k.agree(header{Kind: callhead.Reduce, DType: dt, Op: op, Root: int32(root), Count: uint64(n)}); err != nil {
		return err
	}
	if c.size > 1 {
		if c.rank == (root+1)%c.size {
			return k.send(c.next(), frameData, buf)
		}
		acc := make([]byte, len(buf))
		if _, err := k.recv(c.prev(), frameData, acc); err != nil {
			return err
		}
		combine(dt, op, acc, buf)
		if c.rank != root {
			return k.send(c.next(), frameData, acc)
		}
		copy(buf, acc)
	}
	if op == Avg {
		finishAvg(dt, buf, c.size)
	}
	return nil
}

// AllGather fills out, on every rank, with every rank's in, in rank order:
// out holds Size slices of len(in).
func (c *Comm) AllGather(out, in []byte) error {
	k, err := c.begin("all_gather")
	if err != nil {
		return err
	}
	return k.end(k.allGather(out, in))
}

func (k *call) allGather(out, in []byte) error {
	c := k.c
	if len(out) != c.size*len(in) {
		return fmt.Errorf("out holds %d bytes, want %d (%d ranks × %d bytes of in)", len(out), c.size*len(in), c.size, len(in))
	}
	if err := k.agree(header{Kind: callhead.AllGather, Root: -1, Count: uint64(len(in))}); err != nil {
		return err
	}
	n := len(in)
	block := func(b int) []byte { return out[b*n : (b+1)*n] }
	copy(block(c.rank), in)
	return k.allGatherRing(block)
}

// ReduceScatter leaves in out, on rank r, the reduction over ranks of slice
// r of in, which holds Size slices of len(out). in is not changed.
func (c *Comm) ReduceScatter(out, in []byte, dt device.DType, op Op) error {
	k, err := c.begin("reduce_scatter")
	if err != nil {
		return err
	}
	return k.end(k.reduceScatter(out, in, dt, op))
}

func (k *call) reduceScatter(out, in []byte, dt device.DType, op Op) error {
	c := k.c
	n, err := checkBuf("out", out, dt)
	if err != nil {
		return err
	}
	if !op.Valid() {
		return fmt.Errorf("invalid reduction %s", op)
	}
	if len(in) != c.size*len(out) {
		return fmt.Errorf("in holds %d bytes, want %d (%d ranks × %d bytes of out)", len(in), c.size*len(out), c.size, len(out))
	}
	if err := k.agree(header{Kind: callhead.ReduceScatter, DType: dt, Op: op, Root: -1, Count: uint64(n)}); err != nil {
		return err
	}
	work := append([]byte(nil), in...)
	m := len(out)
	block := func(b int) []byte { return work[b*m : (b+1)*m] }
	if err := k.reduceScatterRing(block, dt, op, make([]byte, m)); err != nil {
		return err
	}
	copy(out, block(c.rank))
	if op == Avg {
		finishAvg(dt, out, c.size)
	}
	return nil
}

// Barrier returns once every rank has called it.
func (c *Comm) Barrier() error {
	k, err := c.begin("barrier")
	if err != nil {
		return err
	}
	return k.end(k.agree(header{Kind: callhead.Barrier, Root: -1}))
}

// Send sends buf to peer, whose matching Recv must ask for len(buf) bytes.
func (c *Comm) Send(buf []byte, peer int) error {
	k, err := c.begin("send")
	if err != nil {
		return err
	}
	return k.end(k.pointToPoint(callhead.Send, buf, peer))
}

// Recv receives into buf what peer sends with Send.
func (c *Comm) Recv(buf []byte, peer int) error {
	k, err := c.begin("recv")
	if err != nil {
		return err
	}
	return k.end(k.pointToPoint(callhead.Recv, buf, peer))
}

func (k *call) pointToPoint(kd callhead.Kind, buf []byte, peer int) error {
	c := k.c
	if err := c.checkRoot("peer", peer); err != nil {
		return err
	}
	if peer == c.rank {
		return fmt.Errorf("peer %d is this rank", peer)
	}
	p := c.peers[peer]
	if err := k.agreePair(header{Kind: kd, Root: int32(peer), Count: uint64(len(buf))}, p); err != nil {
		return err
	}
	if kd == callhead.Send {
		return k.send(p, frameData, buf)
	}
	_, err := k.recv(p, frameData, buf)
	return err
}
