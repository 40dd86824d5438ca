package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
)

// errInterrupted is the cause a statement stopped by Ctrl-C gives: its
// error reads "stdin:1: interrupted!", as in lua.
var errInterrupted = errors.New("interrupted!")

// interrupter lets Ctrl-C stop the statement running at the prompt, as
// lua.c's SIGINT handler does. At the prompt readline keeps the terminal
// raw, so Ctrl-C arrives there as a key, not a signal. While a statement
// runs, the first SIGINT cancels the statement's context; a second before
// the statement has stopped (one stuck inside a long Go call) gets the
// default action and ends glua, as it ends lua.
type interrupter struct {
	signals chan os.Signal
	mu      sync.Mutex
	cancel  context.CancelCauseFunc // the running statement's; nil when none runs
}

func newInterrupter() *interrupter {
	in := &interrupter{signals: make(chan os.Signal, 1)}
	signal.Notify(in.signals, os.Interrupt)
	go in.loop()
	return in
}

func (in *interrupter) loop() {
	for range in.signals {
		in.mu.Lock()
		if in.cancel != nil {
			in.cancel(errInterrupted)
			in.cancel = nil
			signal.Reset(os.Interrupt)
		}
		in.mu.Unlock()
	}
}

// start makes a fresh context for a statement about to run; done marks
// its end, and takes SIGINT back from its default action if a first
// Ctrl-C had given it away. The context is not cancelled when the
// statement ends: a coroutine it made may still hold it, and would stop
// at its next resume.
func (in *interrupter) start() (ctx context.Context, done func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	in.mu.Lock()
	in.cancel = cancel
	in.mu.Unlock()
	return ctx, func() {
		in.mu.Lock()
		in.cancel = nil
		in.mu.Unlock()
		signal.Notify(in.signals, os.Interrupt)
	}
}

// close gives SIGINT its default action back.
func (in *interrupter) close() {
	signal.Stop(in.signals)
	close(in.signals)
}
