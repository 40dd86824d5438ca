package runtime_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gluaproject/glua/runtime"
)

// Coroutines nest as deep as in lua5.1 run from the command line, 198
// calls of nest, and the next resume fails with lua5.1's words.
func TestNestedCoroutinesStopWithCStackOverflowAsInLua51(t *testing.T) {
	var out bytes.Buffer
	rt := newCPU(t, runtime.Options{Stdout: &out})
	err := rt.DoString(`
		local depth = 0
		local function nest()
			depth = depth + 1
			local ok, err = coroutine.resume(coroutine.create(nest))
			if not ok then error(err, 0) end
		end
		print(pcall(nest))
		print(depth)
		local function wrapped() return coroutine.wrap(wrapped)() end
		local ok, err = pcall(wrapped)
		print(ok, err:match("C stack overflow$"))`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "false\tC stack overflow\n198\nfalse\tC stack overflow\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}

func TestSixtyThousandNestedCoroutinesLeaveTheProcessAlive(t *testing.T) {
	var out bytes.Buffer
	rt := newCPU(t, runtime.Options{Stdout: &out})
	if err := rt.DoString(`
		local n = 0
		local function nest() n = n + 1 if n < 60000 then coroutine.wrap(nest)() end end
		print(pcall(nest))`); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "false\t") || !strings.HasSuffix(out.String(), "C stack overflow\n") {
		t.Errorf("printed %q", out.String())
	}
}
