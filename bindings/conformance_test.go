package bindings_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	_ "github.com/gluaproject/glua/bindings"
	"github.com/gluaproject/glua/runtime"
)

// prelude gives every conformance script a few assertions. They live in Lua
// so that a failure reports the script's own line. The runner also sets
// tmpdir, a directory of the script's own for files it writes, removed
// when the script ends.
const prelude = `
check = {}
function check.error(pattern, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then error("expected an error matching '" .. pattern .. "', got success", 2) end
  if not string.find(tostring(err), pattern, 1, true) then
    error("expected an error containing '" .. pattern .. "', got: " .. tostring(err), 2)
  end
  return err
end
function check.eq(got, want, what)
  if got ~= want then error(string.format("%s: got %s, want %s", what or "value", tostring(got), tostring(want)), 2) end
end
function check.near(got, want, tol, what)
  if not (math.abs(got - want) <= tol * math.max(1, math.abs(want))) then
    error(string.format("%s: got %.9g, want %.9g (tolerance %g)", what or "value", got, want, tol), 2)
  end
end
-- rel is ||x - y|| / ||y|| computed on the device.
function check.rel(x, y)
  local d = x:clone()
  require("kernels").axpy(d, -1, y)
  local r = require("kernels").norm(d) / require("kernels").norm(y)
  d:free()
  return r
end
tolerance = { float32 = 1e-5, float64 = 1e-12, float16 = 1e-2, bfloat16 = 1e-2, tf32 = 5e-3 }
`

// backends lists the backends the conformance scripts run on: the CPU
// always, the GPU when one is present (and it must be when
// GLUA_REQUIRE_CUDA=1).
func backends(t *testing.T) []string {
	out := []string{"cpu"}
	rt, err := runtime.New(runtime.Options{Backend: "cuda", Config: defaultConfig()})
	if err == nil {
		rt.Close()
		return append(out, "cuda")
	}
	if os.Getenv("GLUA_REQUIRE_CUDA") == "1" {
		t.Fatalf("GLUA_REQUIRE_CUDA=1 but the cuda backend is unavailable: %v", err)
	}
	t.Logf("cuda backend unavailable, running on cpu only: %v", err)
	return out
}

// backendRun is a backend and a pool strategy to run a test on.
type backendRun struct{ backend, strategy string }

// backendRuns are the backends of backends(t), each with the caching
// pool, and the GPU also with the other strategies, which is where they
// differ: "none" calls the driver for every allocation, "cuda" uses its
// stream-ordered pool.
func backendRuns(t *testing.T) []backendRun {
	var runs []backendRun
	for _, backend := range backends(t) {
		runs = append(runs, backendRun{backend, "caching"})
		if backend == "cuda" {
			runs = append(runs, backendRun{backend, "none"}, backendRun{backend, "cuda"})
		}
	}
	return runs
}

func TestConformance(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("testdata", "*.lua"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no conformance scripts: %v", err)
	}
	for _, r := range backendRuns(t) {
		for _, script := range scripts {
			name := r.backend + "/" + r.strategy + "/" + strings.TrimSuffix(filepath.Base(script), ".lua")
			t.Run(name, func(t *testing.T) {
				rt, err := runtime.New(runtime.Options{Backend: r.backend, MemoryPool: r.strategy, Config: defaultConfig(), CPUMemory: "1GiB"})
				if err != nil {
					t.Fatal(err)
				}
				defer rt.Close()
				if err := rt.DoString(prelude); err != nil {
					t.Fatal(err)
				}
				rt.Lua().SetGlobal("tmpdir", lua.LString(t.TempDir()))
				if err := rt.DoFile(script); err != nil {
					t.Fatal(err)
				}
				if n := rt.LiveArrays(); n > 64 {
					t.Logf("%d arrays still live at the end of %s", n, script)
				}
			})
		}
	}
}
