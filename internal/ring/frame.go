package ring

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// Frame types. Every message on a connection is one frame: a type byte, the
// payload's length (8 bytes, little-endian), then the payload.
const (
	frameHeader byte = 1 + iota // a call's description, for agreement
	frameData                   // a slice of a buffer
	frameAbort                  // the sender failed: origin rank and why
	frameHello                  // dial: a rank introduces itself
	frameTable                  // dial: rank 0's answer, every rank's address or why not
)

var frameNames = [...]string{frameHeader: "header", frameData: "data", frameAbort: "abort", frameHello: "hello", frameTable: "table"}

func frameName(t byte) string {
	if int(t) < len(frameNames) && frameNames[t] != "" {
		return frameNames[t]
	}
	return fmt.Sprintf("type-%d", t)
}

// maxSmallFrame bounds the frames read into fresh memory (headers, hellos,
// tables, aborts), so that a stray client cannot make a rank allocate
// gigabytes.
const maxSmallFrame = 1 << 20

// peer is the connection to one other rank.
type peer struct {
	rank    int
	conn    net.Conn
	timeout time.Duration

	wmu sync.Mutex
	// broken says that a write stopped partway through a frame, so nothing
	// more, not even an abort, can be framed on this connection.
	broken bool
}

var errBroken = errors.New("connection broken by an earlier failed write")

func (p *peer) write(typ byte, payload []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return p.writeLocked(typ, payload, p.timeout)
}

func (p *peer) writeLocked(typ byte, payload []byte, timeout time.Duration) error {
	if p.broken {
		return errBroken
	}
	var head [9]byte
	head[0] = typ
	binary.LittleEndian.PutUint64(head[1:], uint64(len(payload)))
	if err := p.conn.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	bufs := net.Buffers{head[:], payload}
	if _, err := bufs.WriteTo(p.conn); err != nil {
		p.broken = true
		return err
	}
	return nil
}

// read reads one frame of type typ. With into it reads the payload there and
// its length must be len(into); without, it returns a fresh small payload.
// An abort frame comes back as an *abortFrame error.
func (p *peer) read(typ byte, into []byte) ([]byte, error) {
	if err := p.conn.SetReadDeadline(time.Now().Add(p.timeout)); err != nil {
		return nil, err
	}
	return p.readUntilSet(typ, into)
}

// readUntilSet is read under the read deadline already set on p.conn.
func (p *peer) readUntilSet(typ byte, into []byte) ([]byte, error) {
	var head [9]byte
	if _, err := io.ReadFull(p.conn, head[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(head[1:])
	got := head[0]
	if got == frameAbort || into == nil {
		if n > maxSmallFrame {
			return nil, &protocolError{fmt.Sprintf("a %s frame of %d bytes", frameName(got), n)}
		}
		into = make([]byte, n)
	} else if got == typ && n != uint64(len(into)) {
		return nil, &protocolError{fmt.Sprintf("%d bytes of data where %d were due", n, len(into))}
	}
	if got != typ && got != frameAbort {
		return nil, &protocolError{fmt.Sprintf("a %s frame where a %s frame was due", frameName(got), frameName(typ))}
	}
	if _, err := io.ReadFull(p.conn, into); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if got == frameAbort {
		return nil, decodeAbort(into)
	}
	return into, nil
}

type protocolError struct{ what string }

func (e *protocolError) Error() string { return "protocol error: " + e.what }

// abortFrame is what a failing rank tells the others: the rank at fault
// (itself, or the one it lost) and the message every rank should report.
type abortFrame struct {
	origin int
	msg    string
}

func (a *abortFrame) Error() string { return a.msg }

func encodeAbort(origin int, msg string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(int32(origin)))
	return append(b, msg...)
}

func decodeAbort(b []byte) error {
	if len(b) < 4 {
		return &protocolError{"a short abort frame"}
	}
	return &abortFrame{origin: int(int32(binary.LittleEndian.Uint32(b))), msg: string(b[4:])}
}

// closedByPeer reports whether err means that the other end went away.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
