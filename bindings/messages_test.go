package bindings_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

// TestErrorsReadTheSameOnEveryBackend runs each testdata/messages script
// on every backend and pool strategy. A script reports what its calls
// raise with try(label, fn, ...), one transcript line each; every run's
// transcript must equal the CPU's, and the CPU's the committed .golden
// beside the script, so that a message changed on one backend only fails
// here, on a GPU machine at once and in CI against the golden.
func TestErrorsReadTheSameOnEveryBackend(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("testdata", "messages", "*.lua"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no message scripts: %v", err)
	}
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".lua")
		t.Run(name, func(t *testing.T) {
			var cpu string
			for _, r := range backendRuns(t) {
				got, err := transcript(r, script)
				if err != nil {
					t.Fatalf("%s/%s: %v", r.backend, r.strategy, err)
				}
				if r.backend == "cpu" {
					cpu = got
					golden(t, filepath.Join("messages", name+".golden"), got)
					continue
				}
				if got != cpu {
					gl, cl := strings.Split(got, "\n"), strings.Split(cpu, "\n")
					for i := range min(len(gl), len(cl)) {
						if gl[i] != cl[i] {
							t.Errorf("%s/%s differs from the CPU at line %d:\n%s: %s\ncpu: %s", r.backend, r.strategy, i+1, r.backend, gl[i], cl[i])
							break
						}
					}
					if len(gl) != len(cl) {
						t.Errorf("%s/%s: %d lines, the CPU %d", r.backend, r.strategy, len(gl), len(cl))
					}
				}
			}
		})
	}
}

// transcript runs script on r's backend and returns the lines its try
// calls wrote.
func transcript(r backendRun, script string) (string, error) {
	rt, err := runtime.New(runtime.Options{Backend: r.backend, MemoryPool: r.strategy, Config: defaultConfig(), CPUMemory: "1GiB"})
	if err != nil {
		return "", err
	}
	defer rt.Close()
	var b strings.Builder
	L := rt.Lua()
	L.SetGlobal("say", L.NewFunction(func(L *lua.LState) int {
		parts := make([]string, L.GetTop())
		for i := range parts {
			parts[i] = L.ToStringMeta(L.Get(i + 1)).String()
		}
		fmt.Fprintln(&b, strings.Join(parts, "\t"))
		return 0
	}))
	if err := rt.DoFile(filepath.Join("testdata", "lib", "try.lua")); err != nil {
		return "", err
	}
	if err := rt.DoFile(script); err != nil {
		return "", err
	}
	return b.String(), nil
}
