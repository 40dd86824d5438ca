package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/runtime"
)

func TestLuaMemoryLimitStopsEveryWayOfGrowing(t *testing.T) {
	var out bytes.Buffer
	rt := newCPU(t, runtime.Options{LuaMemoryLimit: "64MiB", Stdout: &out})
	if err := rt.DoFile("testdata/luamemory.lua"); err != nil {
		t.Fatal(err)
	}
	if out.String() != "ok\n" {
		t.Errorf("printed %q", out.String())
	}
}

func TestSandboxedScriptsGetTheSmallerLuaMemoryLimit(t *testing.T) {
	var out bytes.Buffer
	rt := newCPU(t, runtime.Options{Sandbox: true, Stdout: &out})
	if err := rt.DoString(`print(pcall(string.rep, "xx", 2^30))`); err != nil {
		t.Fatal(err)
	}
	want := "false\tnot enough memory: 2.0 GiB more would pass the Lua memory limit of 1.0 GiB"
	if !strings.HasPrefix(out.String(), want) || !strings.Contains(out.String(), "the sandbox's default") {
		t.Errorf("printed %q, want %q... naming the sandbox's default", out.String(), want)
	}
}

func TestLuaMemoryLimitOptionIsCheckedAndNone(t *testing.T) {
	_, err := runtime.New(cpuOptions(runtime.Options{LuaMemoryLimit: "lots"}, "64MiB"))
	if err == nil || !strings.Contains(err.Error(), "Options.LuaMemoryLimit") {
		t.Errorf("a bad limit: %v, want an error naming Options.LuaMemoryLimit", err)
	}
	var out bytes.Buffer
	rt := newCPU(t, runtime.Options{LuaMemoryLimit: "none", Stdout: &out})
	// With no limit of glua's own, what the machine cannot give is still
	// refused.
	if err := rt.DoString(`print(pcall(string.rep, ("x"):rep(2^21), 2^31 - 1))`); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "false\tnot enough memory: 4.0 PiB more is more than the machine has available") {
		t.Errorf("printed %q", out.String())
	}
}

// Long library calls end at the context's deadline, as Lua code does,
// within a fraction of a second.
func TestLongLibraryCallsStopAtTheDeadline(t *testing.T) {
	for _, tc := range []struct{ name, setup, call string }{
		{"string.rep", ``, `local s = string.rep("abc", 4e8)`},
		{"table.sort", `t = {} for i = 1, 2e6 do t[i] = (i * 7919) % 2e6 end`, `table.sort(t)`},
		{"loadstring", `src = ("x = 1 "):rep(4e6)`, `loadstring(src)`},
		{"load", `src = ("x = 1 "):rep(4e6)`, `local done load(function() if not done then done = true return src end end)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newCPU(t, runtime.Options{})
			if err := rt.DoString(tc.setup); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			rt.SetContext(ctx)
			start := time.Now()
			err := rt.DoString(tc.call)
			took := time.Since(start)
			if err == nil || !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "deadline exceeded") {
				t.Fatalf("err = %v after %v, want the deadline's error", err, took)
			}
			if took > time.Second {
				t.Errorf("stopped after %v, want well under a second", took)
			}
		})
	}
}

// A file's source is read and compiled in Go, out of the VM's sight: its
// size is checked against the limit before dofile or loadfile reads it.
func TestLoadingABigFileIsCheckedAgainstTheLuaMemoryLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.lua")
	if err := os.WriteFile(path, []byte(strings.Repeat("x=1 ", 4<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	// A limit well above what the package's other tests leave on the
	// process's heap, which the limit counts too.
	rt := newCPU(t, runtime.Options{LuaMemoryLimit: "256MiB", Stdout: &out})
	if err := rt.SetGlobal("path", path); err != nil {
		t.Fatal(err)
	}
	if err := rt.DoString(`print(pcall(dofile, path)) print(pcall(loadfile, path)) print(x)`); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || lines[2] != "nil" {
		t.Fatalf("printed %q, want two refusals and x never set", out.String())
	}
	for _, l := range lines[:2] {
		if !strings.HasPrefix(l, "false\tnot enough memory: 512 MiB more would pass the Lua memory limit of 256 MiB") {
			t.Errorf("printed %q, want not enough memory for 16 MiB of source", l)
		}
	}
}
