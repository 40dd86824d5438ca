package ring

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/gluaproject/glua/internal/hello"
)

// magic opens every hello, so that a rank refuses a stray client, or a
// process speaking another version of this protocol, by name.
const magic = "glua-ring/1"

// retryEvery is the pause between attempts to reach a listener that is not
// up yet: ranks start at different times.
const retryEvery = 50 * time.Millisecond

// Dial joins the ring. Rank 0 listens on cfg.Addr and every other rank
// registers there with its own listener's address; once all have, rank 0
// sends everyone the table of addresses and each rank connects to every
// rank below it. It fails when the ranks are not all connected within
// cfg.Timeout, naming the ranks that were missing. Size 1 needs no network.
func Dial(ctx context.Context, cfg Config) (*Comm, error) {
	if cfg.Size < 1 {
		return nil, &Error{Op: "dial", Rank: cfg.Rank, Msg: fmt.Sprintf("size %d: need at least 1 rank", cfg.Size)}
	}
	if cfg.Rank < 0 || cfg.Rank >= cfg.Size {
		return nil, &Error{Op: "dial", Rank: cfg.Rank, Msg: fmt.Sprintf("rank %d out of range: ranks are 0 to %d", cfg.Rank, cfg.Size-1)}
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c := &Comm{rank: cfg.Rank, size: cfg.Size, timeout: timeout, peers: make([]*peer, cfg.Size)}
	if cfg.Size == 1 {
		return c, nil
	}
	if cfg.Addr == "" {
		return nil, c.dialError(c.rank, "no rendezvous address (host:port of rank 0's listener)")
	}
	// The ranks other than 0 wait a little past the timeout for rank 0's
	// verdict, so that they report what rank 0 found missing rather than
	// racing its deadline with their own.
	ctx, cancel := context.WithTimeout(ctx, timeout+grace(c.rank))
	defer cancel()
	reach, cancelReach := context.WithTimeout(ctx, timeout)
	defer cancelReach()
	d := &dialer{c: c, ctx: ctx, reach: reach, addr: cfg.Addr}
	// Cancellation or the deadline interrupts whatever the dial is blocked
	// on, leaving the connections open so that rank 0 can still say why.
	stop := context.AfterFunc(ctx, d.interrupt)
	err := d.run()
	if !stop() && err == nil {
		err = d.timedOut("the ring was not complete")
	}
	if err != nil {
		d.closeAll()
		return nil, err
	}
	d.closeRendezvous()
	return c, nil
}

func grace(rank int) time.Duration {
	if rank == 0 {
		return 0
	}
	return abortTimeout
}

func (c *Comm) dialError(rank int, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if rank == c.rank {
		msg = fmt.Sprintf("rank %d: %s", c.rank, msg)
	}
	return &Error{Op: "dial", Rank: rank, Msg: msg}
}

// dialer holds what Dial opens, so that one function can close it all.
type dialer struct {
	c     *Comm
	ctx   context.Context
	reach context.Context // the deadline for reaching rank 0
	addr  string

	mu         sync.Mutex
	listeners  []net.Listener
	rendezvous []net.Conn
}

func (d *dialer) track(ln net.Listener, conns ...net.Conn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ln != nil {
		d.listeners = append(d.listeners, ln)
	}
	d.rendezvous = append(d.rendezvous, conns...)
}

func (d *dialer) closeAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ln := range d.listeners {
		ln.Close()
	}
	for _, conn := range d.rendezvous {
		conn.Close()
	}
	for _, p := range d.c.peers {
		if p != nil {
			p.conn.Close()
		}
	}
}

// interrupt wakes what the dial is blocked on. The connections' deadlines
// go first: rank 0 wakes from Accept only when its listener closes, and
// then sets a deadline of its own to send the other ranks its verdict,
// which a deadline set after it would cut short.
func (d *dialer) interrupt() {
	d.mu.Lock()
	defer d.mu.Unlock()
	past := time.Unix(1, 0)
	for _, conn := range d.rendezvous {
		conn.SetDeadline(past)
	}
	for _, p := range d.c.peers {
		if p != nil {
			p.conn.SetDeadline(past)
		}
	}
	for _, ln := range d.listeners {
		ln.Close()
	}
}

func (d *dialer) closeRendezvous() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ln := range d.listeners {
		ln.Close()
	}
	for _, conn := range d.rendezvous {
		conn.Close()
	}
}

func (d *dialer) timedOut(what string) *Error { return timedOut(d.c, d.ctx, what) }

func timedOut(c *Comm, ctx context.Context, what string) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return c.dialError(c.rank, "%s within the timeout (%v)", what, c.timeout)
	}
	return c.dialError(c.rank, "%s: %v", what, context.Cause(ctx))
}

func (d *dialer) remaining() time.Duration {
	dl, _ := d.ctx.Deadline()
	return max(time.Until(dl), time.Millisecond)
}

func (d *dialer) run() error {
	var addrs []string
	var ln net.Listener
	var err error
	if d.c.rank == 0 {
		ln, addrs, err = d.host()
	} else {
		ln, addrs, err = d.join()
	}
	if err != nil {
		return err
	}
	return d.mesh(ln, addrs)
}

// helloMsg is what a rank sends first on every connection it opens.
type helloMsg struct {
	rank, size int
	addr       string // its listener, in the rendezvous; "" in the mesh
}

func (h helloMsg) encode() []byte {
	b := append([]byte(magic), 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(h.rank))
	b = binary.LittleEndian.AppendUint32(b, uint32(h.size))
	return append(b, h.addr...)
}

// readHello reads a connection's hello frame within the deadline
// hello.Accept set; it drops the connections for which it fails: they
// are not ranks.
func readHello(conn net.Conn) (helloMsg, error) {
	p := &peer{rank: -1, conn: conn}
	b, err := p.readUntilSet(frameHello, nil)
	if err != nil {
		return helloMsg{}, err
	}
	return decodeHello(b)
}

func decodeHello(b []byte) (helloMsg, error) {
	m := len(magic)
	if len(b) < m+9 || string(b[:m]) != magic || b[m] != 0 {
		return helloMsg{}, errors.New("not a glua ring client (bad hello)")
	}
	b = b[m+1:]
	return helloMsg{
		rank: int(int32(binary.LittleEndian.Uint32(b))),
		size: int(int32(binary.LittleEndian.Uint32(b[4:]))),
		addr: string(b[8:]),
	}, nil
}

// host is rank 0's side of the rendezvous.
func (d *dialer) host() (net.Listener, []string, error) {
	c := d.c
	rl, err := net.Listen("tcp", d.addr)
	if err != nil {
		return nil, nil, c.dialError(0, "cannot listen on %s: %v", d.addr, err)
	}
	d.track(rl)
	host, _, _ := net.SplitHostPort(d.addr)
	ml, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, nil, c.dialError(0, "cannot listen on %s: %v", net.JoinHostPort(host, "0"), err)
	}
	d.track(ml)
	addrs := make([]string, c.size)
	addrs[0] = ml.Addr().String()
	joined := make([]*peer, c.size)
	fail := func(e *Error, also ...*peer) (net.Listener, []string, error) {
		d.tell(append(joined, also...), encodeTable(e, nil))
		return nil, nil, e
	}
	ctx, cancel := context.WithCancel(d.ctx)
	defer cancel()
	greetings, _ := hello.Accept(ctx, rl, min(hello.Wait, d.remaining()), "rank 0's rendezvous at "+d.addr, readHello)
	for n := 1; n < c.size; {
		g, ok := <-greetings
		if !ok {
			var missing []string
			for r := 1; r < c.size; r++ {
				if joined[r] == nil {
					missing = append(missing, fmt.Sprint(r))
				}
			}
			e := d.timedOut(fmt.Sprintf("rank %s did not register at %s", strings.Join(missing, ", "), d.addr))
			if m, _ := firstInt(missing); m > 0 {
				e.Rank = m
			}
			return fail(e)
		}
		d.track(nil, g.Conn)
		p := &peer{rank: -1, conn: g.Conn, timeout: d.remaining()}
		h := g.Hello
		switch {
		case h.size != c.size:
			return fail(c.dialError(h.rank, "rank %d was started with %d ranks, rank 0 with %d", h.rank, h.size, c.size), p)
		case h.rank < 1 || h.rank >= c.size:
			return fail(c.dialError(h.rank, "a process registered as rank %d; ranks are 0 to %d", h.rank, c.size-1), p)
		case joined[h.rank] != nil:
			return fail(c.dialError(h.rank, "two processes registered as rank %d", h.rank), p)
		}
		p.rank = h.rank
		joined[h.rank] = p
		addrs[h.rank] = h.addr
		n++
	}
	if err := d.tell(joined, encodeTable(nil, addrs)); err != nil {
		return nil, nil, err
	}
	return ml, addrs, nil
}

func firstInt(s []string) (int, bool) {
	if len(s) == 0 {
		return 0, false
	}
	var n int
	_, err := fmt.Sscan(s[0], &n)
	return n, err == nil
}

// tell sends rank 0's table, or its failure, to every registered rank.
func (d *dialer) tell(joined []*peer, table []byte) error {
	for _, p := range joined {
		if p == nil {
			continue
		}
		p.timeout = max(d.remaining(), abortTimeout)
		if err := p.write(frameTable, table); err != nil {
			return d.c.dialError(p.rank, "rank %d left before it got the table of addresses: %v", p.rank, err)
		}
	}
	return nil
}

// A table is the rank at fault and the failure message, empty on success,
// then the addresses.
func encodeTable(failure *Error, addrs []string) []byte {
	var b []byte
	if failure == nil {
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint32(b, 0)
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(failure.Rank)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(failure.Msg)))
		b = append(b, failure.Msg...)
	}
	for _, a := range addrs {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(a)))
		b = append(b, a...)
	}
	return b
}

func decodeTable(b []byte) (atFault int, failure string, addrs []string, ok bool) {
	if len(b) < 4 {
		return 0, "", nil, false
	}
	atFault = int(int32(binary.LittleEndian.Uint32(b)))
	b = b[4:]
	next := func() (string, bool) {
		if len(b) < 4 {
			return "", false
		}
		n := int(binary.LittleEndian.Uint32(b))
		if len(b)-4 < n {
			return "", false
		}
		s := string(b[4 : 4+n])
		b = b[4+n:]
		return s, true
	}
	if failure, ok = next(); !ok {
		return 0, "", nil, false
	}
	for len(b) > 0 {
		a, ok := next()
		if !ok {
			return 0, "", nil, false
		}
		addrs = append(addrs, a)
	}
	return atFault, failure, addrs, true
}

// join is the side of every other rank: reach rank 0, retrying until it
// listens, register, and wait for the table.
func (d *dialer) join() (net.Listener, []string, error) {
	c := d.c
	conn, err := d.dialRetry(d.reach, d.addr)
	if err != nil {
		return nil, nil, timedOut(c, d.reach, fmt.Sprintf("could not reach rank 0 at %s (%v)", d.addr, err))
	}
	d.track(nil, conn)
	// Listen on the address that reached rank 0: on several hosts it is
	// the one the others can reach too.
	host := conn.LocalAddr().(*net.TCPAddr).IP.String()
	ml, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, nil, c.dialError(c.rank, "cannot listen on %s: %v", net.JoinHostPort(host, "0"), err)
	}
	d.track(ml)
	p := &peer{rank: 0, conn: conn, timeout: d.remaining()}
	if err := p.write(frameHello, helloMsg{rank: c.rank, size: c.size, addr: ml.Addr().String()}.encode()); err != nil {
		return nil, nil, c.dialError(0, "rank 0 at %s went away: %v", d.addr, err)
	}
	p.timeout = d.remaining()
	b, err := p.read(frameTable, nil)
	if err != nil {
		if d.ctx.Err() != nil {
			return nil, nil, d.timedOut("no table of addresses from rank 0")
		}
		return nil, nil, c.dialError(0, "rank 0 at %s went away before it sent the table of addresses: %v", d.addr, err)
	}
	atFault, failure, addrs, ok := decodeTable(b)
	switch {
	case !ok || (failure == "" && len(addrs) != c.size):
		return nil, nil, c.dialError(0, "rank 0 sent a malformed table of addresses")
	case failure != "":
		return nil, nil, &Error{Op: "dial", Rank: atFault, Msg: failure}
	}
	return ml, addrs, nil
}

func (d *dialer) dialRetry(ctx context.Context, addr string) (net.Conn, error) {
	var nd net.Dialer
	for {
		conn, err := nd.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn, nil
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(retryEvery):
		}
	}
}

// mesh connects every pair of ranks: the higher dials the lower. The
// collectives use only the connections to the ring's neighbours; send and
// recv need the others.
func (d *dialer) mesh(ln net.Listener, addrs []string) error {
	c := d.c
	type result struct {
		p   *peer
		err *Error
	}
	results := make(chan result, c.size)
	for r := 0; r < c.rank; r++ {
		go func() {
			conn, err := d.dialRetry(d.ctx, addrs[r])
			if err != nil {
				results <- result{err: d.timedOut(fmt.Sprintf("could not connect to rank %d at %s (%v)", r, addrs[r], err))}
				return
			}
			p := &peer{rank: r, conn: conn, timeout: c.timeout}
			if err := p.write(frameHello, helloMsg{rank: c.rank, size: c.size}.encode()); err != nil {
				conn.Close()
				results <- result{err: c.dialError(r, "rank %d at %s went away: %v", r, addrs[r], err)}
				return
			}
			results <- result{p: p}
		}()
	}
	ctx, cancel := context.WithCancel(d.ctx)
	defer cancel()
	where := fmt.Sprintf("rank %d's listener at %s", c.rank, addrs[c.rank])
	greetings, _ := hello.Accept(ctx, ln, min(hello.Wait, d.remaining()), where, readHello)
	go func() {
		for n := c.rank + 1; n < c.size; {
			g, ok := <-greetings
			if !ok {
				e := d.timedOut(fmt.Sprintf("not every rank above %d connected", c.rank))
				for ; n < c.size; n++ {
					results <- result{err: e}
				}
				return
			}
			h := g.Hello
			if h.rank <= c.rank || h.rank >= c.size || h.size != c.size {
				log.Printf("%s: dropped a connection from %s: it said it was rank %d of %d", where, g.Conn.RemoteAddr(), h.rank, h.size)
				g.Conn.Close()
				continue
			}
			results <- result{p: &peer{rank: h.rank, conn: g.Conn, timeout: c.timeout}}
			n++
		}
	}()
	var first *Error
	for n := 1; n < c.size; n++ {
		res := <-results
		if res.err != nil {
			if first == nil {
				first = res.err
				d.closeAll() // unblocks the rest
			}
			continue
		}
		d.mu.Lock()
		dup := c.peers[res.p.rank] != nil
		if !dup {
			c.peers[res.p.rank] = res.p
		}
		d.mu.Unlock()
		if dup && first == nil {
			first = c.dialError(res.p.rank, "two processes connected as rank %d", res.p.rank)
			d.closeAll()
		}
		if dup {
			res.p.conn.Close()
		}
	}
	if first != nil {
		return first
	}
	return nil
}
