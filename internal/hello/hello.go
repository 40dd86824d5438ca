// Package hello accepts the connections of a group's rendezvous and reads
// each one's first message, its hello, on a goroutine of its own under a
// short deadline of its own. A client that connects and sends nothing (a
// port scanner, a health check, a process of another job) then costs only
// its own deadline, never the wait for the ranks that do come, and is
// dropped and named in the log rather than taken for a rank.
package hello

import (
	"context"
	"errors"
	"log"
	"net"
	"sync"
	"time"
)

// Wait is how long a connection has to send its hello. A rank sends it
// as soon as it has connected, so only a stranger comes near it.
const Wait = 5 * time.Second

// Greeting is an accepted connection and what its hello said.
type Greeting[T any] struct {
	Conn  net.Conn
	Hello T
}

// Accept accepts connections on l until ctx ends or l fails (closed, or
// past its deadline), reading each one's hello with read within wait. A
// connection whose hello read fails is closed and logged as a stranger
// at where (a description of the listener: "rank 0's rendezvous at
// 127.0.0.1:29500"). The greetings come on the first channel; the second
// gets Accept's error once l fails, after which the first is closed when
// the hellos in flight are read. A greeting that finds ctx ended is
// closed instead of sent.
func Accept[T any](ctx context.Context, l net.Listener, wait time.Duration, where string, read func(net.Conn) (T, error)) (<-chan Greeting[T], <-chan error) {
	out := make(chan Greeting[T])
	failed := make(chan error, 1)
	go func() {
		var readers sync.WaitGroup
		defer func() {
			readers.Wait()
			close(out)
		}()
		for {
			conn, err := l.Accept()
			if err != nil {
				failed <- err
				return
			}
			readers.Add(1)
			go func() {
				defer readers.Done()
				conn.SetReadDeadline(time.Now().Add(wait))
				h, err := read(conn)
				if err != nil {
					log.Printf("%s: dropped a connection from %s: %v", where, conn.RemoteAddr(), stranger(err))
					conn.Close()
					return
				}
				conn.SetReadDeadline(time.Time{})
				select {
				case out <- Greeting[T]{Conn: conn, Hello: h}:
				case <-ctx.Done():
					conn.Close()
				}
			}()
		}
	}()
	return out, failed
}

// stranger words why a connection is not taken for a rank.
func stranger(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "it sent no hello in time"
	}
	return err.Error()
}
