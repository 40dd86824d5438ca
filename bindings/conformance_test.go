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

// prelude is testdata/lib/check.lua: the assertions every conformance
// script may use (the parity test loads it too). The runner also sets
// tmpdir, a directory of the script's own for files it writes, removed
// when the script ends.
var prelude = filepath.Join("testdata", "lib", "check.lua")

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
				if err := rt.DoFile(prelude); err != nil {
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
