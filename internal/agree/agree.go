// Package agree compares the calls of a group's ranks beside a
// communicator that does not compare them itself (NCCL). Each rank sends
// rank 0 the header of every collective as it enqueues the call, without
// waiting for an answer; rank 0 compares each rank's k-th header with its
// own k-th and, on a difference, tells every rank why. The data moves
// meanwhile, so a disagreement surfaces within a round trip after the call
// returned, and the caller's OnFail aborts the communicator: the ranks get
// an error naming the calls instead of waiting out a timeout or reducing
// garbage. Rank 0 also sees a rank leave (its connection close) before a
// call that rank 0 has made, and fails at once rather than at the timeout.
//
// Point-to-point calls involve two ranks, so they are not compared: the
// k-th collective of one rank is the k-th of every rank.
package agree

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/gluaproject/glua/internal/callhead"
	"github.com/gluaproject/glua/internal/hello"
)

// Error is the group's failure: Op is the call that disagreed or that a
// rank left before, Rank the rank at fault.
type Error struct {
	Op   string
	Rank int
	Msg  string
	// ThisCall is set on the error Call returns when that call is where
	// the failure was found (a rank that left before it), not earlier.
	ThisCall bool
}

func (e *Error) Error() string { return e.Op + ": " + e.Msg }

// Checker is one rank's end. Call is safe from several goroutines.
type Checker struct {
	rank, size int
	onFail     func(*Error)

	mu     sync.Mutex
	cond   *sync.Cond
	err    *Error
	closed bool

	// rank 0: its own headers from index base on, and each peer's
	// connection and, once it closed, how many headers it had sent.
	own   []callhead.Header
	base  int
	calls int
	peers []*peer

	// other ranks: the connection to rank 0, whether writing to it failed
	// or it closed (rank 0 gone: its NCCL calls time out on their own),
	// and how many Settles rank 0 has confirmed and this rank has begun.
	conn     net.Conn
	broken   bool
	rootGone bool
	acks     int
	settles  int
}

// Frames from rank 0 to the other ranks.
const (
	frameFail = 'F' // the group's failure: an encoded Error
	frameAck  = 'A' // every call before the latest Settle agreed
)

type peer struct {
	rank int
	conn net.Conn
	next int // index of the next header expected from it
	left bool
}

// A joining rank's first message is helloMagic, then its rank and the
// size it was started with; the magic tells a rank from a stranger.
const (
	helloMagic = "glua-agree/1"
	helloSize  = len(helloMagic) + 8
)

// Root is rank 0's end: it accepts the size-1 other ranks on l within
// timeout (zero: no limit) and then compares their calls with its own.
// onFail is called once, on a goroutine of its own, when the group fails.
func Root(l net.Listener, size int, timeout time.Duration, onFail func(*Error)) (*Checker, error) {
	c := &Checker{rank: 0, size: size, onFail: onFail, peers: make([]*peer, size)}
	c.cond = sync.NewCond(&c.mu)
	wait := hello.Wait
	if tl, ok := l.(*net.TCPListener); ok && timeout > 0 {
		tl.SetDeadline(time.Now().Add(timeout))
		wait = min(wait, timeout)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	greetings, failed := hello.Accept(ctx, l, wait, "rank 0's check of calls at "+l.Addr().String(), readHello)
	for joined := 1; joined < size; joined++ {
		g, ok := <-greetings
		if !ok {
			c.Close()
			return nil, fmt.Errorf("%d of %d ranks joined the check of their calls: %w", joined, size, <-failed)
		}
		r, n := g.Hello[0], g.Hello[1]
		if n != size || r <= 0 || r >= size || c.peers[r] != nil {
			g.Conn.Close()
			c.Close()
			return nil, fmt.Errorf("a rank joined the check of calls as rank %d of %d, in a group of %d", r, n, size)
		}
		c.peers[r] = &peer{rank: r, conn: g.Conn}
	}
	for _, p := range c.peers[1:] {
		go c.compare(p)
	}
	return c, nil
}

// readHello reads a joining rank's hello: its rank and the size it was
// started with.
func readHello(conn net.Conn) ([2]int, error) {
	var b [helloSize]byte
	if _, err := io.ReadFull(conn, b[:]); err != nil {
		return [2]int{}, err
	}
	if string(b[:len(helloMagic)]) != helloMagic {
		return [2]int{}, errors.New("not a glua rank (bad hello)")
	}
	n := b[len(helloMagic):]
	return [2]int{int(binary.LittleEndian.Uint32(n)), int(binary.LittleEndian.Uint32(n[4:]))}, nil
}

// Join is the end of rank (> 0): it connects to rank 0's Root at addr.
func Join(addr string, rank, size int, timeout time.Duration, onFail func(*Error)) (*Checker, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("joining the check of calls at %s: %w", addr, err)
	}
	msg := binary.LittleEndian.AppendUint32([]byte(helloMagic), uint32(rank))
	msg = binary.LittleEndian.AppendUint32(msg, uint32(size))
	if _, err := conn.Write(msg); err != nil {
		conn.Close()
		return nil, fmt.Errorf("joining the check of calls at %s: %w", addr, err)
	}
	c := &Checker{rank: rank, size: size, onFail: onFail, conn: conn}
	c.cond = sync.NewCond(&c.mu)
	go c.listen()
	return c, nil
}

// Call records this rank's next collective. It returns the group's
// failure when one is known, and otherwise does not wait for the others:
// a rank other than 0 writes the header to its connection (a few
// microseconds), which blocks only when rank 0 is thousands of calls
// behind.
func (c *Checker) Call(h callhead.Header) error {
	c.mu.Lock()
	if err := c.err; err != nil {
		c.mu.Unlock()
		return err
	}
	if c.closed {
		c.mu.Unlock()
		return errors.New("the check of calls is closed")
	}
	if c.rank != 0 {
		if !c.broken {
			_, err := c.conn.Write(h.Encode())
			c.broken = err != nil
		}
		c.mu.Unlock()
		return nil
	}
	k := c.calls
	c.calls++
	c.own = append(c.own, h)
	var gone *peer
	for _, p := range c.peers[1:] {
		if p.left && p.next <= k && gone == nil {
			gone = p
		}
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	if gone != nil {
		c.fail(&Error{Op: h.Kind.String(), Rank: gone.rank, Msg: leftMsg(gone.rank, gone.next)})
		if e := c.Err(); e != nil {
			now := *e
			now.ThisCall = now.Op == h.Kind.String() && now.Msg == leftMsg(gone.rank, gone.next)
			return &now
		}
	}
	return nil
}

func leftMsg(rank, calls int) string {
	s := "s"
	if calls == 1 {
		s = ""
	}
	return fmt.Sprintf("rank %d left the group after %d collective call%s, before this one", rank, calls, s)
}

// compare reads p's headers and compares each with rank 0's of the same
// index, waiting for rank 0 to make that call. A failure is recorded in
// the same hold of c.mu that finds it, so that Settle never sees p caught
// up or gone without seeing the failure too.
func (c *Checker) compare(p *peer) {
	r := bufio.NewReader(p.conn)
	buf := make([]byte, callhead.Size)
	for {
		if _, err := io.ReadFull(r, buf); err != nil {
			c.mu.Lock()
			p.left = true
			var e *Error
			if c.calls > p.next {
				e = &Error{Op: c.own[p.next-c.base].Kind.String(), Rank: p.rank, Msg: leftMsg(p.rank, p.next)}
			}
			failed := e != nil && c.recordLocked(e)
			c.cond.Broadcast()
			c.mu.Unlock()
			if failed {
				c.notify(e)
			}
			return
		}
		theirs, _ := callhead.Decode(buf)
		c.mu.Lock()
		for c.calls <= p.next && c.err == nil && !c.closed {
			c.cond.Wait()
		}
		if c.err != nil || c.closed {
			c.mu.Unlock()
			return
		}
		mine := c.own[p.next-c.base]
		if msg := callhead.Disagreement(p.rank, theirs, 0, mine); msg != "" {
			e := &Error{Op: mine.Kind.String(), Rank: p.rank, Msg: msg}
			c.recordLocked(e)
			c.mu.Unlock()
			c.notify(e)
			return
		}
		p.next++
		c.trim()
		c.cond.Broadcast()
		c.mu.Unlock()
	}
}

// trim drops rank 0's headers that every peer has passed. c.mu is held.
func (c *Checker) trim() {
	low := c.calls
	for _, p := range c.peers[1:] {
		low = min(low, p.next)
	}
	if low-c.base >= 1024 {
		c.own = append([]callhead.Header(nil), c.own[low-c.base:]...)
		c.base = low
	}
}

// listen reads rank 0's frames: confirmations of Settle, or the group's
// failure.
func (c *Checker) listen() {
	r := bufio.NewReader(c.conn)
	for {
		typ, err := r.ReadByte()
		if err == nil && typ == frameAck {
			c.mu.Lock()
			c.acks++
			c.cond.Broadcast()
			c.mu.Unlock()
			continue
		}
		var e *Error
		if err == nil && typ == frameFail {
			e, err = readVerdict(r)
		}
		if e != nil {
			c.fail(e)
			return
		}
		c.mu.Lock()
		c.rootGone = true
		c.cond.Broadcast()
		c.mu.Unlock()
		return
	}
}

// Settle is for a call every rank makes (a barrier, leaving the group): it
// waits until rank 0 has compared every call made so far with every
// rank's, so that a disagreement is reported by then at the latest, and
// returns the group's failure if there is one. timeout (zero: none)
// bounds the wait.
func (c *Checker) Settle(timeout time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	expired := false
	if timeout > 0 {
		t := time.AfterFunc(timeout, func() {
			c.mu.Lock()
			expired = true
			c.cond.Broadcast()
			c.mu.Unlock()
		})
		defer t.Stop()
	}
	if c.rank != 0 {
		c.settles++
	}
	for c.err == nil && !c.closed && !expired && !c.settledLocked() {
		c.cond.Wait()
	}
	switch {
	case c.err != nil:
		return c.err
	case c.closed:
		return errors.New("the check of calls is closed")
	case !c.settledLocked():
		return fmt.Errorf("the ranks' calls were not all compared within %v", timeout)
	}
	if c.rank == 0 {
		for _, p := range c.peers[1:] {
			if !p.left {
				p.conn.SetWriteDeadline(time.Now().Add(time.Second))
				p.conn.Write([]byte{frameAck})
			}
		}
	}
	return nil
}

// settledLocked: on rank 0, every rank has sent and had compared every
// call rank 0 made (or left after its last); elsewhere, rank 0 confirmed
// this rank's latest Settle or is gone. c.mu is held.
func (c *Checker) settledLocked() bool {
	if c.rank != 0 {
		return c.rootGone || c.acks >= c.settles
	}
	for _, p := range c.peers[1:] {
		if p.next < c.calls && !p.left {
			return false
		}
	}
	return true
}

// fail records e as the group's failure, once, and tells of it.
func (c *Checker) fail(e *Error) {
	c.mu.Lock()
	first := c.recordLocked(e)
	c.mu.Unlock()
	if first {
		c.notify(e)
	}
}

// recordLocked makes e the group's failure unless there is one already
// or the Checker is closed; c.mu is held.
func (c *Checker) recordLocked(e *Error) bool {
	if c.err != nil || c.closed {
		return false
	}
	c.err = e
	c.cond.Broadcast()
	return true
}

// notify tells the others of the failure e (rank 0), and the caller's
// onFail.
func (c *Checker) notify(e *Error) {
	if c.rank == 0 {
		v := encodeVerdict(e)
		for _, p := range c.peers[1:] {
			p.conn.SetWriteDeadline(time.Now().Add(time.Second))
			p.conn.Write(v)
		}
	}
	go c.onFail(e) // not on the caller's goroutine, which may hold the communicator's lock
}

func encodeVerdict(e *Error) []byte {
	b := binary.LittleEndian.AppendUint32([]byte{frameFail}, uint32(e.Rank))
	for _, s := range []string{e.Op, e.Msg} {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	return b
}

func readVerdict(r io.Reader) (*Error, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	e := &Error{Rank: int(binary.LittleEndian.Uint32(n[:]))}
	for _, s := range []*string{&e.Op, &e.Msg} {
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return nil, err
		}
		size := binary.LittleEndian.Uint32(n[:])
		if size > 1<<16 {
			return nil, fmt.Errorf("a verdict of %d bytes", size)
		}
		b := make([]byte, size)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		*s = string(b)
	}
	return e, nil
}

// Err is the group's failure, or nil.
func (c *Checker) Err() *Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the checks; the other ranks see this rank leave. Closing
// twice is harmless.
func (c *Checker) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.cond.Broadcast()
	c.mu.Unlock()
	if c.conn != nil {
		c.conn.Close()
	}
	for _, p := range c.peers {
		if p != nil {
			p.conn.Close()
		}
	}
	return nil
}
