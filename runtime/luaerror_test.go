package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/pool"
	"github.com/gluaproject/glua/runtime"
)

// A host sees the Go error behind a script's failure, while the script's
// pcall still gets the message string it matches with string.find.
func TestGoErrorsSurviveTheTripThroughLua(t *testing.T) {
	cases := []struct {
		name, src string
		is        error
		message   string
	}{
		{"out of memory", `require("cuda").zeros({1024, 1024, 64})`, device.ErrOutOfMemory, "cuda.zeros: out of CPU backend memory"},
		{"freed array", `local x = require("cuda").zeros({4}); x:free(); require("kernels").scale(x, 2)`, runtime.ErrFreed, "use of freed array"},
		{"bad argument", `require("cuda").zeros("four")`, runtime.ErrBadArgument, "cuda.zeros: bad argument #1"},
		{"bad option", `require("pool").set_limit({hard = true})`, runtime.ErrBadArgument, "hard must be a size"},
		{"host memory", `require("cuda").host_array({1e12})`, device.ErrOutOfMemory, "out of host memory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := newCPU(t, runtime.Options{CPUMemory: "64MiB"})
			err := rt.DoString(tc.src)
			if !errors.Is(err, tc.is) {
				t.Fatalf("errors.Is(%v, %v) is false", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.message) {
				t.Errorf("message %q lacks %q", err, tc.message)
			}
			var apiErr *lua.ApiError
			if !errors.As(err, &apiErr) {
				t.Errorf("errors.As to *lua.ApiError fails on %v", err)
			}
			// Inside Lua the same failure is a plain message.
			err = rt.DoString(`local ok, msg = pcall(function() ` + tc.src + ` end)
				assert(not ok and type(msg) == "string" and msg:find("` + tc.message + `", 1, true), tostring(msg))`)
			if err != nil {
				t.Fatalf("inside pcall: %v", err)
			}
		})
	}
}

func TestOOMDetailsReachTheHost(t *testing.T) {
	rt := newCPU(t, runtime.Options{CPUMemory: "64MiB", HardLimit: "16MiB"})
	err := rt.DoString(`local keep = require("cuda").zeros({1024, 1024, 2}); require("cuda").zeros({1024, 1024, 3})`)
	var oom *pool.OOMError
	if !errors.As(err, &oom) {
		t.Fatalf("errors.As(%v, *pool.OOMError) fails", err)
	}
	if oom.Requested != 12<<20 || oom.HardLimit != 16<<20 || oom.InUse != 8<<20 {
		t.Errorf("OOM details %+v", *oom)
	}
}

func TestCancelledScriptIsTheContextsError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	rt := newCPU(t, runtime.Options{Context: ctx})
	err := rt.DoString(`while true do end`)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("errors.Is(%v, context.DeadlineExceeded) is false", err)
	}
}

// An error a script raises itself has no Go cause, and a stale cause from
// an earlier call is not attached to it.
func TestScriptsOwnErrorsHaveNoGoCause(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	if err := rt.DoString(`pcall(require("cuda").zeros, "x")`); err != nil {
		t.Fatal(err)
	}
	err := rt.DoString(`error("mine")`)
	var se *runtime.ScriptError
	if !errors.As(err, &se) || se.Cause != nil || errors.Is(err, runtime.ErrBadArgument) {
		t.Fatalf("a script's own error: %#v", err)
	}
}
