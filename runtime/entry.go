package runtime

import (
	"bytes"
	"context"
	"errors"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gluaproject/glua/internal/lua51"
)

// ErrInUse is the error of a DoString, DoFile, Call, SetGlobal or Global
// made while another goroutine runs the runtime's Lua state: a Lua state
// runs on one goroutine at a time, and two at once would corrupt it.
var ErrInUse = errors.New("runtime in use by another goroutine: a runtime runs one script at a time (use one runtime per goroutine, or wait for the other call to return)")

// entries lets one goroutine at a time into the runtime's Lua state and
// lets Close, from any goroutine, stop the one inside. The goroutine
// inside may enter again (a Func the script calls may call Call); another
// is refused with ErrInUse.
type entries struct {
	mu      sync.Mutex
	owner   uint64 // the goroutine inside; 0: none
	depth   int    // its entries, nested
	closing bool   // Close has begun: every entry is refused
	// stop ends the outermost entry's context, so that its Lua code
	// stops at its next instruction; left is closed when it has left.
	stop func()
	left chan struct{}
}

// enter lets the calling goroutine into rt's Lua state, under a context
// that Close can end as well as the host's (Options.Context, SetContext).
// The caller must call the returned leave when done with the state.
func (rt *Runtime) enter() (leave func(), err error) {
	e := &rt.script.entries
	id := goroutineID()
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closing || rt.closed.Load():
		return nil, ErrClosed
	case e.owner == id:
		e.depth++
		return func() {
			e.mu.Lock()
			e.depth--
			e.mu.Unlock()
		}, nil
	case e.owner != 0:
		return nil, ErrInUse
	}
	base := rt.L.Context()
	run := newRunContext(base)
	rt.L.SetContext(run)
	lua51.KeepHook(rt.L) // a script's debug.sethook outlives the context
	e.owner, e.depth = id, 1
	e.stop, e.left = run.close, make(chan struct{})
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.depth--; e.depth > 0 {
			return
		}
		if base == nil {
			rt.L.RemoveContext()
		} else {
			rt.L.SetContext(base)
		}
		lua51.KeepHook(rt.L)
		run.release()
		e.owner = 0
		close(e.left)
	}, nil
}

// close begins Close: it refuses every later entry and stops the run
// under way, if any, waiting until it has left the Lua state. Called from
// inside the run itself (a Func the script called), it cannot wait for
// its own caller and refuses instead.
func (e *entries) close() error {
	e.mu.Lock()
	if e.owner != 0 && e.owner == goroutineID() {
		e.mu.Unlock()
		return errors.New("runtime.Close: called from inside the runtime's own run (a function the script called); close it after the run returns")
	}
	e.closing = true
	if e.owner == 0 {
		e.mu.Unlock()
		return nil
	}
	e.stop()
	left := e.left
	e.mu.Unlock()
	<-left
	return nil
}

// runContext is the context a run's Lua code runs under: it ends when the
// host's (Options.Context, SetContext) does, with its cause, or when Close
// stops the run, with ErrClosed. gopher-lua asks Done at every
// instruction, so Done is a field read, not cancelCtx's atomic load and
// the method calls of a context chain.
type runContext struct {
	context.Context // the host's, wrapped in causeContext; Background if none
	done            chan struct{}
	once            sync.Once
	closed          atomic.Bool // Close ended it
	unwatch         func() bool // stops watching the host's context
}

func newRunContext(base context.Context) *runContext {
	if base == nil {
		base = context.Background()
	}
	r := &runContext{Context: base, done: make(chan struct{})}
	watch := base
	if c, ok := base.(causeContext); ok {
		watch = c.Context // a context package's own: watched without a goroutine
	}
	r.unwatch = context.AfterFunc(watch, r.end)
	return r
}

func (r *runContext) end()                  { r.once.Do(func() { close(r.done) }) }
func (r *runContext) Done() <-chan struct{} { return r.done }

// close is Close's stop.
func (r *runContext) close() {
	r.closed.Store(true)
	r.end()
}

// release stops watching the host's context once the run has left.
func (r *runContext) release() { r.unwatch() }

func (r *runContext) Err() error {
	select {
	case <-r.done:
	default:
		return nil
	}
	if r.closed.Load() {
		return &stopError{cause: ErrClosed, err: context.Canceled}
	}
	return r.Context.Err()
}

// stoppedByClose is err, or ErrClosed when Close stopped the run.
func (rt *Runtime) stoppedByClose(err error) error {
	if err != nil && errors.Is(err, ErrClosed) {
		return ErrClosed
	}
	return err
}

// goroutineID is the calling goroutine's number, read from the first line
// of its stack ("goroutine 18 [running]:"): Go gives no other way to tell
// a nested entry from another goroutine's. It costs about a microsecond,
// once an entry.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:goruntime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}
