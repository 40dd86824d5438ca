package runtime_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gluaproject/glua/runtime"
)

// TestCloseDuringARunStopsItWaitsAndCloses: Close from another goroutine
// while DoString runs (allocating and computing on arrays, which Close
// frees) stops the script at its next instruction, waits for it, then
// closes; the run returns ErrClosed. Run it with -race.
func TestCloseDuringARunStopsItWaitsAndCloses(t *testing.T) {
	for _, entry := range []string{"DoString", "Call"} {
		t.Run(entry, func(t *testing.T) {
			rt, err := runtime.New(cpuOptions(runtime.Options{}, "256MiB"))
			if err != nil {
				t.Fatal(err)
			}
			const loop = `
				local cuda, kernels = require("cuda"), require("kernels")
				local a = cuda.rand({256, 256})
				local c = cuda.zeros({256, 256})
				inside()
				while true do
					kernels.matmul(c, a, a)
					local t = c:copy_to_host()
				end`
			started := make(chan struct{})
			rt.SetGlobal("inside", runtime.Func(func(...any) ([]any, error) { close(started); return nil, nil }))
			done := make(chan error, 1)
			go func() {
				if entry == "DoString" {
					done <- rt.DoString(loop)
					return
				}
				if err := rt.DoString("function run()\n" + loop + "\nend"); err != nil {
					done <- err
					return
				}
				_, err := rt.Call("run")
				done <- err
			}()
			<-started
			time.Sleep(100 * time.Millisecond) // well inside the loop
			start := time.Now()
			if err := rt.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			select {
			case err := <-done:
				if err != runtime.ErrClosed {
					t.Fatalf("the run returned %v, want ErrClosed", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the run did not return after Close")
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Close took %v", d)
			}
			if err := rt.DoString("x = 1"); err != runtime.ErrClosed {
				t.Fatalf("DoString after Close: %v", err)
			}
		})
	}
}

// TestASecondGoroutineIsToldTheRuntimeIsInUse: while one goroutine runs
// the runtime, another's DoString, Call, SetGlobal and Global return
// ErrInUse at once instead of corrupting the Lua state; once the run
// returns they work. Run it with -race.
func TestASecondGoroutineIsToldTheRuntimeIsInUse(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	if err := rt.DoString(`function spin(n) local s = 0 for i = 1, n do s = s + i end return s end
		function wait_for_go() go_waiting = true while not released do end end`); err != nil {
		t.Fatal(err)
	}
	if err := rt.SetGlobal("released", false); err != nil {
		t.Fatal(err)
	}
	// Two goroutines calling at once: every call either runs or says the
	// runtime is in use, never a panic or a wrong result.
	var wg sync.WaitGroup
	var mu sync.Mutex
	ran, refused := 0, 0
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				res, err := rt.Call("spin", 1000)
				mu.Lock()
				switch {
				case err == nil && len(res) == 1 && res[0] == float64(500500):
					ran++
				case errors.Is(err, runtime.ErrInUse):
					refused++
				default:
					t.Errorf("Call: %v, %v", res, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ran == 0 {
		t.Fatal("no call ran")
	}
	t.Logf("%d calls ran, %d were told the runtime was in use", ran, refused)

	// One goroutine inside for as long as it takes to try every entry.
	inside := make(chan struct{})
	done := make(chan error, 1)
	rt.SetGlobal("signal", runtime.Func(func(...any) ([]any, error) { close(inside); return nil, nil }))
	go func() {
		done <- rt.DoString(`signal() local s = 0 for i = 1, 3e6 do s = s + i end`)
	}()
	<-inside
	for name, call := range map[string]func() error{
		"DoString":  func() error { return rt.DoString("x = 1") },
		"DoFile":    func() error { return rt.DoFile("testdata/leak.lua") },
		"Call":      func() error { _, err := rt.Call("spin", 1); return err },
		"SetGlobal": func() error { return rt.SetGlobal("x", 1) },
		"Global":    func() error { _, err := rt.Global("x"); return err },
	} {
		err := call()
		if !errors.Is(err, runtime.ErrInUse) || !strings.Contains(err.Error(), "runtime in use by another goroutine") {
			t.Errorf("%s while another goroutine runs: %v", name, err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res, err := rt.Call("spin", 10); err != nil || res[0] != float64(55) {
		t.Fatalf("Call after the run: %v, %v", res, err)
	}
}

// TestAFunctionTheScriptCallsMayCallBack: the goroutine running a script
// may enter again (a Func calling Call), and Close from there is an error
// rather than a wait for itself.
func TestAFunctionTheScriptCallsMayCallBack(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	if err := rt.DoString(`function double(x) return 2 * x end`); err != nil {
		t.Fatal(err)
	}
	var closeErr error
	rt.SetGlobal("host", runtime.Func(func(args ...any) ([]any, error) {
		closeErr = rt.Close()
		return rt.Call("double", args[0])
	}))
	if err := rt.DoString(`assert(host(21) == 42)`); err != nil {
		t.Fatal(err)
	}
	if closeErr == nil || !strings.Contains(closeErr.Error(), "called from inside the runtime's own run") {
		t.Fatalf("Close from inside the run: %v", closeErr)
	}
}
