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
// Point-to-point calls are paired as NCCL pairs them: the i-th call of
// rank a with peer b goes with the i-th call of rank b with peer a, one
// must send what the other receives, and both must come after as many
// collectives (on one stream, a pair split by a collective waits for
// ever). Rank 0 sees every rank's headers, so it pairs them all, and
// tells both ranks of each pair made, for Paired.
//
// A rank that closes its Checker says goodbye first. One whose connection
// ends without it (the process exited or failed) is gone: the others are
// told (Error.Gone), so that a collective still waiting on it can be
// aborted once the data it already sent has had time to land.
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
	// Gone is set when a rank left without closing its Checker: the work
	// already queued may still finish, what waits on that rank will not.
	Gone bool
}

func (e *Error) Error() string {
	if e.Op == "" {
		return e.Msg
	}
	return e.Op + ": " + e.Msg
}

// Checker is one rank's end. Call is safe from several goroutines.
type Checker struct {
	rank, size int
	onFail     func(*Error)

	mu     sync.Mutex
	cond   *sync.Cond
	err    *Error
	closed bool

	// calls is how many collectives this rank has made; sent and
	// paired, by peer, how many sends and recvs it has made and how many
	// of those rank 0 has paired.
	calls        int
	sent, paired []int

	// rank 0: its own headers from index base on, each peer's connection
	// and, once it closed, how many headers it had sent, and the
	// point-to-point calls not yet paired, by (caller, peer).
	own     []callhead.Header
	base    int
	peers   []*peer
	pending map[[2]int][]p2pCall

	// other ranks: the connection to rank 0, whether writing to it failed
	// or it closed, how many collectives rank 0 made if it said goodbye
	// (-1 until then), and how many Settles rank 0 has confirmed and this
	// rank has begun.
	conn      net.Conn
	broken    bool
	rootGone  bool
	rootCalls int
	acks      int
	settles   int
}

// Frames from rank 0 to the other ranks.
const (
	frameFail = 'F' // the group's failure: an encoded Error
	frameGone = 'G' // a rank left without a goodbye: an encoded Error
	frameAck  = 'A' // every call before the latest Settle agreed
	frameBye  = 'B' // rank 0 closed after this many collectives (uint32)
	framePair = 'P' // a send or recv with this peer (uint32) was paired
)

// byeKind is the header a rank other than 0 sends as its goodbye.
const byeKind callhead.Kind = 0

type peer struct {
	rank    int
	conn    net.Conn
	next    int // index of the next header expected from it
	arrived int // collective headers read from it, compared or not
	// kinds are the latest of those collectives, from index kindBase on,
	// to name the one a send or recv to it was left behind by.
	kinds    []callhead.Kind
	kindBase int
	left     bool
	bye      bool // it said goodbye before its connection closed
}

// p2pCall is a send or recv rank 0 has not yet paired, and how many
// collectives its caller had made before it.
type p2pCall struct {
	h     callhead.Header
	epoch int
}

// A joining rank's first message is helloMagic, then its rank and the
// size it was started with; the magic tells a rank from a stranger.
const (
	helloMagic = "glua-agree/2"
	helloSize  = len(helloMagic) + 8
)

// Root is rank 0's end: it accepts the size-1 other ranks on l within
// timeout (zero: no limit) and then compares their calls with its own.
// onFail is called once, on a goroutine of its own, when the group fails.
func Root(l net.Listener, size int, timeout time.Duration, onFail func(*Error)) (*Checker, error) {
	c := &Checker{rank: 0, size: size, onFail: onFail, peers: make([]*peer, size), pending: map[[2]int][]p2pCall{},
		sent: make([]int, size), paired: make([]int, size)}
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
	c := &Checker{rank: rank, size: size, onFail: onFail, conn: conn, rootCalls: -1, sent: make([]int, size), paired: make([]int, size)}
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
	p2p := h.Kind == callhead.Send || h.Kind == callhead.Recv
	if p2p && h.Root >= 0 && int(h.Root) < c.size {
		c.sent[h.Root]++
	}
	if c.rank != 0 {
		if !p2p {
			c.calls++
		}
		var e *Error
		switch {
		case c.rootGone && c.rootCalls < 0:
			e = &Error{Op: h.Kind.String(), Rank: 0, Msg: goneMsg(0), Gone: true, ThisCall: true}
		case c.rootCalls >= 0 && !p2p && c.calls > c.rootCalls:
			e = &Error{Op: h.Kind.String(), Rank: 0, Msg: leftMsg(0, c.rootCalls), ThisCall: true}
		case c.rootCalls >= 0 && p2p && h.Root == 0:
			e = &Error{Op: h.Kind.String(), Rank: 0, Msg: closedMsg(0), ThisCall: true}
		case c.rootCalls >= 0:
			// Rank 0 has closed: sends and recvs between the others
			// go on unpaired.
		case !c.broken:
			_, err := c.conn.Write(h.Encode())
			c.broken = err != nil
		}
		first := e != nil && c.recordLocked(e)
		c.mu.Unlock()
		if first {
			c.notify(e)
		}
		if e != nil {
			return e
		}
		return nil
	}
	if p2p {
		e := c.pairLocked(0, h, c.calls)
		failed := e != nil && c.recordLocked(e)
		c.mu.Unlock()
		if failed {
			c.notify(e)
			now := *e
			now.ThisCall = true
			return &now
		}
		return nil
	}
	k := c.calls
	pe := c.passLocked(0, k, h.Kind)
	c.calls++
	c.own = append(c.own, h)
	if pe != nil && c.recordLocked(pe) {
		c.mu.Unlock()
		c.notify(pe)
		return pe
	}
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

// closedMsg is a send or recv whose peer has left: the CPU backend's
// words for it.
func closedMsg(rank int) string {
	return fmt.Sprintf("rank %d closed its connection (it exited, failed or closed its communicator)", rank)
}

func goneMsg(rank int) string {
	return fmt.Sprintf("rank %d left the group without closing it (it exited or failed)", rank)
}

// pairLocked takes rank from's send or recv h, made after epoch
// collectives, and pairs it with its peer's, or keeps it until the peer's
// comes; it returns why the two cannot pair, or why the peer, already
// past that collective, never will. c.mu is held; rank 0 only.
func (c *Checker) pairLocked(from int, h callhead.Header, epoch int) *Error {
	to := int(h.Root)
	if to < 0 || to >= c.size || to == from {
		return &Error{Op: h.Kind.String(), Rank: from, Msg: fmt.Sprintf("rank %d called %s in a group of %d", from, h.PairCall(), c.size)}
	}
	if q := c.pending[[2]int{to, from}]; len(q) > 0 {
		theirs := q[0]
		c.pending[[2]int{to, from}] = q[1:]
		if hi, msg := callhead.PairDisagreement(from, h, to, theirs.h); msg != "" {
			return &Error{Op: h.Kind.String(), Rank: hi, Msg: msg}
		}
		if epoch != theirs.epoch {
			hi, he, lo, le, hh, lh := from, epoch, to, theirs.epoch, h, theirs.h
			if to > from {
				hi, he, lo, le, hh, lh = to, theirs.epoch, from, epoch, theirs.h, h
			}
			return &Error{Op: h.Kind.String(), Rank: hi, Msg: fmt.Sprintf("rank %d called %s after %s, rank %d called %s after %d",
				hi, hh.PairCall(), plural(he, "collective call"), lo, lh.PairCall(), le)}
		}
		c.pairedLocked(from, to)
		c.pairedLocked(to, from)
		return nil
	}
	if c.collectivesOf(to) > epoch {
		return &Error{Op: h.Kind.String(), Rank: from, Msg: fmt.Sprintf("rank %d called %s, rank %d called %s",
			from, h.PairCall(), to, c.kindAt(to, epoch))}
	}
	if to != 0 && c.peers[to].left {
		return &Error{Op: h.Kind.String(), Rank: to, Msg: closedMsg(to)}
	}
	c.pending[[2]int{from, to}] = append(c.pending[[2]int{from, to}], p2pCall{h: h, epoch: epoch})
	return nil
}

// unpairableLocked is the failure of a send or recv still waiting for
// rank r, which has left, or nil. c.mu is held; rank 0 only.
func (c *Checker) unpairableLocked(r int) *Error {
	for a := range c.size {
		if q := c.pending[[2]int{a, r}]; a != r && len(q) > 0 {
			return &Error{Op: q[0].h.Kind.String(), Rank: r, Msg: closedMsg(r)}
		}
	}
	return nil
}

// pairedLocked tells rank r that its next unconfirmed send or recv with
// peer is paired: rank 0 counts its own, and writes the others a frame.
// c.mu is held; rank 0 only.
func (c *Checker) pairedLocked(r, peer int) {
	if r == 0 {
		c.paired[peer]++
		c.cond.Broadcast()
		return
	}
	if p := c.peers[r]; !p.left {
		p.conn.SetWriteDeadline(time.Now().Add(time.Second))
		p.conn.Write(binary.LittleEndian.AppendUint32([]byte{framePair}, uint32(peer)))
	}
}

// passLocked is rank r making collective k, of kind: a send or recv that
// waits for r since before it can no longer pair. c.mu is held.
func (c *Checker) passLocked(r, k int, kind callhead.Kind) *Error {
	for a := range c.size {
		if q := c.pending[[2]int{a, r}]; a != r && len(q) > 0 && q[0].epoch <= k {
			return &Error{Op: kind.String(), Rank: a, Msg: fmt.Sprintf("rank %d called %s, rank %d called %s", a, q[0].h.PairCall(), r, kind)}
		}
	}
	return nil
}

// collectivesOf is how many collective headers rank r has made known.
func (c *Checker) collectivesOf(r int) int {
	if r == 0 {
		return c.calls
	}
	return c.peers[r].arrived
}

// kindAt names rank r's collective k.
func (c *Checker) kindAt(r, k int) string {
	switch {
	case r == 0 && k >= c.base && k < c.calls:
		return c.own[k-c.base].Kind.String()
	case r != 0 && k >= c.peers[r].kindBase && k < c.peers[r].arrived:
		return c.peers[r].kinds[k-c.peers[r].kindBase].String()
	}
	return fmt.Sprintf("collective call %d", k+1)
}

// arrive counts p's next collective header, of kind, keeping the latest
// kinds. c.mu is held.
func (p *peer) arrive(kind callhead.Kind) {
	p.arrived++
	p.kinds = append(p.kinds, kind)
	if len(p.kinds) >= 2048 {
		p.kinds = append([]callhead.Kind(nil), p.kinds[1024:]...)
		p.kindBase += 1024
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
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
			failed := false
			unpairable := c.unpairableLocked(p.rank)
			switch {
			case c.closed || c.err != nil:
			case c.calls > p.next:
				e = &Error{Op: c.own[p.next-c.base].Kind.String(), Rank: p.rank, Msg: leftMsg(p.rank, p.next)}
				failed = c.recordLocked(e)
			case unpairable != nil:
				e = unpairable
				failed = c.recordLocked(e)
			case !p.bye:
				// Not the group's failure yet: p may have finished its
				// part, and rank 0's next call, or its Close, finds it
				// gone. What waits on p now is told.
				e = &Error{Rank: p.rank, Msg: goneMsg(p.rank), Gone: true}
			}
			c.cond.Broadcast()
			c.mu.Unlock()
			if failed || (e != nil && e.Gone) {
				c.notify(e)
			}
			return
		}
		theirs, _ := callhead.Decode(buf)
		c.mu.Lock()
		if theirs.Kind == byeKind {
			p.bye = true
			c.mu.Unlock()
			continue
		}
		if theirs.Kind == callhead.Send || theirs.Kind == callhead.Recv {
			e := c.pairLocked(p.rank, theirs, p.arrived)
			failed := e != nil && c.recordLocked(e)
			c.mu.Unlock()
			if failed {
				c.notify(e)
				return
			}
			continue
		}
		e := c.passLocked(p.rank, p.arrived, theirs.Kind)
		p.arrive(theirs.Kind)
		if e != nil && c.recordLocked(e) {
			c.mu.Unlock()
			c.notify(e)
			return
		}
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
		if err == nil && typ == framePair {
			var n [4]byte
			if _, err = io.ReadFull(r, n[:]); err == nil {
				if peer := int(binary.LittleEndian.Uint32(n[:])); peer < c.size {
					c.mu.Lock()
					c.paired[peer]++
					c.cond.Broadcast()
					c.mu.Unlock()
				}
				continue
			}
		}
		if err == nil && typ == frameBye {
			var n [4]byte
			if _, err = io.ReadFull(r, n[:]); err == nil {
				c.mu.Lock()
				c.rootCalls = int(binary.LittleEndian.Uint32(n[:]))
				var e *Error
				if c.calls > c.rootCalls {
					e = &Error{Rank: 0, Msg: leftMsg(0, c.rootCalls)}
				}
				c.mu.Unlock()
				if e != nil {
					c.fail(e)
					return
				}
				continue
			}
		}
		var e *Error
		if err == nil && (typ == frameFail || typ == frameGone) {
			e, err = readVerdict(r)
		}
		if e != nil {
			e.Gone = typ == frameGone
			c.fail(e)
			return
		}
		c.mu.Lock()
		c.rootGone = true
		var gone *Error
		if c.rootCalls < 0 && !c.closed && c.err == nil {
			gone = &Error{Rank: 0, Msg: goneMsg(0), Gone: true}
			c.recordLocked(gone)
		}
		c.cond.Broadcast()
		c.mu.Unlock()
		if gone != nil {
			c.notify(gone)
		}
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
	if c.rank != 0 {
		c.settles++
	}
	c.waitLocked(timeout, c.settledLocked)
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

// waitLocked waits, with c.mu held, until done holds, the group fails,
// the Checker closes or timeout (zero: none) passes.
func (c *Checker) waitLocked(timeout time.Duration, done func() bool) {
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
	for c.err == nil && !c.closed && !expired && !done() {
		c.cond.Wait()
	}
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

// Paired waits until rank 0 has paired this rank's latest send or recv
// with peer, made through Call, with peer's counterpart: NCCL connects a
// pair at its first send or recv, blocking both ranks on the host until
// the other comes, so a rank must not go in when its peer never will.
// It returns the group's failure if there is one (a pair that cannot be
// made is one, as is a peer that left), and nil at once where rank 0 has
// closed and no longer pairs the others' calls (a call with rank 0 itself
// then fails). timeout (zero: none) bounds the wait; past it the error is
// a *TimeoutError.
func (c *Checker) Paired(peer int, timeout time.Duration) error {
	if peer < 0 || peer >= c.size {
		return fmt.Errorf("peer %d out of range: ranks are 0 to %d", peer, c.size-1)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	unpaired := func() bool {
		return c.paired[peer] < c.sent[peer] && (c.rank == 0 || !c.rootGone && c.rootCalls < 0)
	}
	c.waitLocked(timeout, func() bool { return !unpaired() })
	switch {
	case c.err != nil:
		return c.err
	case c.closed:
		return errors.New("the check of calls is closed")
	case peer == 0 && c.rootCalls >= 0 && c.paired[0] < c.sent[0]:
		// rank 0 said goodbye before it paired this rank's call with
		// its own: it never will
		return &Error{Op: "", Rank: 0, Msg: closedMsg(0)}
	case unpaired():
		return &TimeoutError{Peer: peer, Timeout: timeout}
	}
	return nil
}

// TimeoutError is a send or recv that Paired did not see paired within
// its timeout: the peer has not made its half.
type TimeoutError struct {
	Peer    int
	Timeout time.Duration
}

// Error is in the CPU backend's words for a peer that did not come.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("nothing from rank %d within the timeout (%v)", e.Peer, e.Timeout)
}

// Fail makes e the group's failure, found by this rank (a collective
// that did not finish in time), unless there is one already: rank 0
// tells every rank of it.
func (c *Checker) Fail(e *Error) { c.fail(e) }

// Missing is, on rank 0, the ranks whose header of one of rank 0's
// collectives has not come: the ones it waits for, and the earliest of
// those calls ("all_reduce"). Elsewhere it is nil.
func (c *Checker) Missing() (ranks []int, call string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := c.calls
	for _, p := range c.peers {
		if p != nil && p.arrived < c.calls {
			ranks = append(ranks, p.rank)
			first = min(first, p.arrived)
		}
	}
	if len(ranks) > 0 && first >= c.base {
		call = c.own[first-c.base].Kind.String()
	}
	return ranks, call
}

// Latest names rank 0's latest collective ("all_reduce"); "" elsewhere
// or before the first.
func (c *Checker) Latest() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rank != 0 || c.calls == 0 {
		return ""
	}
	return c.own[c.calls-1-c.base].Kind.String()
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
		if e.Gone {
			v[0] = frameGone
		}
		for _, p := range c.peers[1:] {
			p.conn.SetWriteDeadline(time.Now().Add(time.Second))
			p.conn.Write(v)
		}
	}
	if c.onFail != nil {
		go c.onFail(e) // not on the caller's goroutine, which may hold the communicator's lock
	}
}

// sayBye tells the other end (rank 0's peers, or rank 0) that this rank
// closes after calls collectives.
func (c *Checker) sayBye(calls int) {
	deadline := time.Now().Add(time.Second)
	if c.conn != nil {
		c.conn.SetWriteDeadline(deadline)
		c.conn.Write(callhead.Header{Kind: byeKind}.Encode())
	}
	bye := binary.LittleEndian.AppendUint32([]byte{frameBye}, uint32(calls))
	for _, p := range c.peers {
		if p != nil && !p.left {
			p.conn.SetWriteDeadline(deadline)
			p.conn.Write(bye)
		}
	}
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

// Close ends the checks with a goodbye: the other ranks see this rank
// leave after the calls it made. Closing twice is harmless.
func (c *Checker) Close() error { return c.end(true) }

// Abort ends the checks without a goodbye, as a process that exits does:
// the other ranks are told this rank is gone, and abort what waits on it.
func (c *Checker) Abort() error { return c.end(false) }

func (c *Checker) end(bye bool) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.cond.Broadcast()
	calls := c.calls
	c.mu.Unlock()
	if bye {
		c.sayBye(calls)
	}
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
