package hello

import (
	"bufio"
	"context"
	"errors"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func readLine(conn net.Conn) (string, error) {
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err == nil && line != "hi\n" {
		err = errors.New("not a hello")
	}
	return line, err
}

// A connection that sends nothing is dropped on its own deadline and
// named in the log, while one that says hello after it is greeted at once.
func TestASilentConnectionDoesNotHoldUpTheNext(t *testing.T) {
	var mu sync.Mutex
	var logged strings.Builder
	log.SetOutput(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logged.Write(p)
	}))
	defer log.SetOutput(os.Stderr)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	greetings, failed := Accept(ctx, l, 500*time.Millisecond, "the test's listener", readLine)
	silent, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	start := time.Now()
	rank, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer rank.Close()
	rank.Write([]byte("hi\n"))
	g := <-greetings
	if g.Hello != "hi\n" || g.Conn.RemoteAddr().String() != rank.LocalAddr().String() || time.Since(start) > 250*time.Millisecond {
		t.Errorf("greeted %q from %v after %v", g.Hello, g.Conn.RemoteAddr(), time.Since(start))
	}
	g.Conn.Close()
	time.Sleep(time.Second)
	l.Close()
	if err := <-failed; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept's error after the listener closed: %v", err)
	}
	if _, open := <-greetings; open {
		t.Error("the greetings go on after the listener closed")
	}
	mu.Lock()
	defer mu.Unlock()
	want := "the test's listener: dropped a connection from " + silent.LocalAddr().String() + ": it sent no hello in time"
	if !strings.Contains(logged.String(), want) {
		t.Errorf("the log lacks %q:\n%s", want, logged.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
