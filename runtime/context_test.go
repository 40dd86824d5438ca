package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/runtime"
)

// cancelSoon cancels ctx with cause after a moment, so that a script
// started now is running when it happens.
func cancelSoon(t *testing.T, cause error) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	timer := time.AfterFunc(50*time.Millisecond, func() { cancel(cause) })
	t.Cleanup(func() { timer.Stop(); cancel(nil) })
	return ctx
}

// runStopped runs src, which must not end by itself, and returns its error.
func runStopped(t *testing.T, rt *runtime.Runtime, src string) error {
	t.Helper()
	start := time.Now()
	err := rt.DoString(src)
	if err == nil {
		t.Fatalf("%s ended by itself", src)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("%s stopped only after %v", src, d)
	}
	return err
}

func TestCancelledContextStopsTheScriptWithItsCause(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	interrupted := errors.New("interrupted")
	rt.SetContext(cancelSoon(t, interrupted))
	err := runStopped(t, rt, `while true do end`)
	if !strings.Contains(err.Error(), "<string>:1: interrupted") || !errors.Is(err, interrupted) || !errors.Is(err, context.Canceled) {
		t.Errorf("error %q (%#v), want the cause, interrupted, and context.Canceled", err, err)
	}
	rt.SetContext(nil)
	if err := rt.DoString(`x = 1 + 1 assert(x == 2)`); err != nil {
		t.Errorf("the runtime after the stop: %v", err)
	}
}

func TestOptionsContextWithTimeoutCauseNamesTheLimit(t *testing.T) {
	limit := errors.New("stopped after the 50ms limit")
	ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, limit)
	defer cancel()
	rt := newCPU(t, runtime.Options{Context: ctx})
	err := runStopped(t, rt, `local n = 0 while true do n = n + 1 end`)
	if !strings.Contains(err.Error(), "stopped after the 50ms limit") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %q, want the cause and context.DeadlineExceeded", err)
	}
}

// A coroutine runs under the context of whoever resumes it: one made by an
// earlier statement still runs after that statement's context was
// cancelled, and stops when the current one is.
func TestCoroutinesFollowTheirResumersContext(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	first, cancel := context.WithCancel(context.Background())
	rt.SetContext(first)
	if err := rt.DoString(`
		co = coroutine.create(function() while true do coroutine.yield(1) end end)
		spin = coroutine.wrap(function() coroutine.yield(2) while true do end end)
		assert(coroutine.resume(co))
		assert(spin() == 2)`); err != nil {
		t.Fatal(err)
	}
	cancel()
	rt.SetContext(context.Background())
	if err := rt.DoString(`local ok, v = coroutine.resume(co) assert(ok and v == 1, v)`); err != nil {
		t.Fatalf("a coroutine made under a cancelled context: %v", err)
	}
	stop := errors.New("stop the wrapped one")
	rt.SetContext(cancelSoon(t, stop))
	if err := runStopped(t, rt, `spin()`); !errors.Is(err, stop) {
		t.Errorf("coroutine.wrap's function: %v", err)
	}
	rt.SetContext(cancelSoon(t, stop))
	err := runStopped(t, rt, `
		local busy = coroutine.create(function() while true do end end)
		print(coroutine.resume(busy))`)
	if !errors.Is(err, stop) {
		t.Errorf("coroutine.resume: %v", err)
	}
}

// Runtime errors read as Lua 5.1's everywhere a script can meet them: at
// the top level, and in coroutines resumed under a context, which replaces
// the coroutine's main loop.
func TestRuntimeErrorsNameTheValueUnderAContext(t *testing.T) {
	rt := newCPU(t, runtime.Options{Context: context.Background()})
	if err := rt.DoString(`local t = {} return t.a.b`); err == nil ||
		!strings.Contains(err.Error(), "<string>:1: attempt to index field 'a' (a nil value)") {
		t.Errorf("top level: %v", err)
	}
	if err := rt.DoString(`
		local ok, msg = coroutine.resume(coroutine.create(function() local n; return n + 1 end))
		assert(msg == "<string>:2: attempt to perform arithmetic on local 'n' (a nil value)", msg)
		local ok2, msg2 = pcall(coroutine.wrap(function() return undefined() end))
		assert(msg2 == "<string>:4: attempt to call global 'undefined' (a nil value)", msg2)`); err != nil {
		t.Error(err)
	}
}

// TestOptionsContextStopsPatternMatching: string.find with a pattern that
// backtracks for a minute stops at a 500 ms Options.Context deadline, with
// its cause, in well under a second more, as a Lua loop does; so do gsub
// and gmatch.
func TestOptionsContextStopsPatternMatching(t *testing.T) {
	for _, call := range []string{`string.find(s, p)`, `string.gsub(s, p, "")`, `for m in s:gmatch(p) do end`} {
		limit := errors.New("stopped after the 500ms limit")
		ctx, cancel := context.WithTimeoutCause(context.Background(), 500*time.Millisecond, limit)
		rt := newCPU(t, runtime.Options{Context: ctx})
		start := time.Now()
		err := rt.DoString(`local s, p = ("a"):rep(40) .. "b", ("a*"):rep(40) .. "c"; ` + call)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "stopped after the 500ms limit") || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want the cause and context.DeadlineExceeded", call, err)
		}
		if d := time.Since(start); d > 1500*time.Millisecond {
			t.Errorf("%s ran %v under a 500ms deadline", call, d)
		}
	}
}
