package ring

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// DefaultTimeout is the deadline of every read and write when
// Config.Timeout is zero; `[dist] timeout` has the same default.
const DefaultTimeout = time.Minute

// abortTimeout bounds how long a failing rank spends telling the others.
const abortTimeout = time.Second

// Config says where a rank stands and how to find the others.
type Config struct {
	Rank, Size int
	// Addr is host:port of rank 0's rendezvous listener (NCCL_COMM_ID's
	// form). Rank 0 listens there; the others connect. Unused when Size is 1.
	Addr string
	// Timeout is the deadline of every read and write, and of Dial as a
	// whole. Zero means DefaultTimeout.
	Timeout time.Duration
}

// Error is a failed call. Rank is the rank at fault: the one that exited,
// timed out, failed, or whose call disagreed with rank 0's.
type Error struct {
	Op   string // "all_reduce", "dial", ...
	Rank int
	Msg  string
}

func (e *Error) Error() string { return e.Op + ": " + e.Msg }

// Comm is one rank's end of the ring. Its methods are collective: every
// rank must make the same calls in the same order. They are safe to call
// from several goroutines but run one at a time.
type Comm struct {
	rank, size int
	timeout    time.Duration
	peers      []*peer // by rank; nil at this rank's own index

	callMu sync.Mutex // one call at a time: frames of two calls must not interleave

	mu     sync.Mutex
	err    error // the first failure; every later call returns it
	closed bool
}

// Rank is this rank's number, from 0.
func (c *Comm) Rank() int { return c.rank }

// Size is the number of ranks.
func (c *Comm) Size() int { return c.size }

func (c *Comm) next() *peer { return c.peers[(c.rank+1)%c.size] }
func (c *Comm) prev() *peer { return c.peers[(c.rank+c.size-1)%c.size] }

var errClosed = errors.New("communicator closed")

// Close closes every connection. A call in progress fails; later calls
// return an error. The other ranks see this rank's connections close and
// fail at once naming it, unless they too have finished.
func (c *Comm) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.err == nil {
		c.err = &Error{Op: "close", Rank: c.rank, Msg: fmt.Sprintf("rank %d: %v", c.rank, errClosed)}
	}
	for _, p := range c.peers {
		if p != nil {
			p.conn.Close()
		}
	}
	return nil
}

// begin starts a call, or returns the error that made the Comm unusable.
func (c *Comm) begin(op string) (*call, error) {
	c.callMu.Lock()
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		c.callMu.Unlock()
		return nil, earlier(op, err)
	}
	return &call{c: c, op: op}, nil
}

// earlier is the error of a call op made once the Comm is unusable: it
// says that an earlier call stopped the group, and why, so that a script
// catching it does not take op itself for what went wrong.
func earlier(op string, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	if e.Op == "close" {
		return &Error{Op: op, Rank: e.Rank, Msg: e.Msg}
	}
	return &Error{Op: op, Rank: e.Rank, Msg: fmt.Sprintf("the ranks stopped at an earlier %s: %s", e.Op, e.Msg)}
}

// end finishes a call. A failure makes the Comm unusable: this rank tells
// the others why (so that the failure travels around the ring instead of
// waiting for their timeouts) and closes every connection.
func (k *call) end(err error) error {
	c := k.c
	defer c.callMu.Unlock()
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Op: k.op, Rank: c.rank, Msg: err.Error()}
	}
	c.mu.Lock()
	if c.err != nil { // closed while the call ran
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.err = e
	c.mu.Unlock()
	c.abort(e)
	return e
}

// abort tells every peer that can still be told, then closes. It reads and
// discards what the peers still send until they close in turn: closing a
// socket with unread data resets the connection, and a reset can destroy
// the abort frame before the peer has read it.
func (c *Comm) abort(e *Error) {
	msg := e.Msg
	if e.Rank == c.rank {
		msg = fmt.Sprintf("rank %d failed: %s", c.rank, e.Error())
	}
	payload := encodeAbort(e.Rank, msg)
	wait := min(c.timeout, abortTimeout)
	var wg sync.WaitGroup
	for _, p := range c.peers {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.wmu.Lock()
			p.writeLocked(frameAbort, payload, wait)
			p.wmu.Unlock()
			if tc, ok := p.conn.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			p.conn.SetReadDeadline(time.Now().Add(wait))
			io.Copy(io.Discard, p.conn)
			p.conn.Close()
		}()
	}
	wg.Wait()
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

// call is one collective or point-to-point call in progress.
type call struct {
	c  *Comm
	op string

	mu  sync.Mutex
	err *Error
}

// fail records the call's first failure and interrupts every connection,
// so that a read or write blocked elsewhere returns now instead of at its
// deadline. Later failures are consequences of the first and are dropped.
func (k *call) fail(e *Error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		return
	}
	k.err = e
	past := time.Unix(1, 0)
	for _, p := range k.c.peers {
		if p != nil {
			p.conn.SetDeadline(past)
		}
	}
}

func (k *call) failed() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err == nil {
		return nil
	}
	return k.err
}

// ioError turns a failed read or write on p into the error to report.
func (k *call) ioError(p *peer, err error, reading bool) *Error {
	var af *abortFrame
	var pe *protocolError
	switch {
	case errors.As(err, &af):
		return &Error{Op: k.op, Rank: af.origin, Msg: af.msg}
	case errors.As(err, &pe):
		return &Error{Op: k.op, Rank: p.rank, Msg: fmt.Sprintf("rank %d sent %s", p.rank, pe.what)}
	case closedByPeer(err), errors.Is(err, errBroken):
		return &Error{Op: k.op, Rank: p.rank, Msg: fmt.Sprintf("rank %d closed its connection (it exited, failed or closed its communicator)", p.rank)}
	case errors.Is(err, net.ErrClosed):
		return &Error{Op: k.op, Rank: k.c.rank, Msg: fmt.Sprintf("rank %d: %v", k.c.rank, errClosed)}
	case isTimeout(err) && reading:
		return &Error{Op: k.op, Rank: p.rank, Msg: fmt.Sprintf("nothing from rank %d within the timeout (%v)", p.rank, p.timeout)}
	case isTimeout(err):
		return &Error{Op: k.op, Rank: p.rank, Msg: fmt.Sprintf("rank %d took nothing within the timeout (%v)", p.rank, p.timeout)}
	}
	return &Error{Op: k.op, Rank: p.rank, Msg: fmt.Sprintf("connection to rank %d: %v", p.rank, err)}
}

func (k *call) send(p *peer, typ byte, b []byte) error {
	if err := p.write(typ, b); err != nil {
		k.fail(k.ioError(p, err, false))
	}
	return k.failed()
}

func (k *call) recv(p *peer, typ byte, into []byte) ([]byte, error) {
	got, err := p.read(typ, into)
	if err != nil {
		k.fail(k.ioError(p, err, true))
	}
	return got, k.failed()
}

// exchange sends out to `to` while it receives from `from`. Both go at once
// because every rank sends in the same step: were each to send first, large
// buffers would fill the sockets and every rank would wait on the next.
func (k *call) exchange(typ byte, to *peer, out []byte, from *peer, into []byte) ([]byte, error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.send(to, typ, out)
	}()
	got, _ := k.recv(from, typ, into)
	<-done // the writer reads out, which belongs to the caller once we return
	return got, k.failed()
}
