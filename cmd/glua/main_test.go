package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gluaBin is the glua binary built once for all tests, run as a subprocess
// the way users run it.
var gluaBin string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	// A machine without Go (a GPU host running a test binary built
	// elsewhere) names a glua built from the same tree.
	if bin := os.Getenv("GLUA_TEST_GLUA"); bin != "" {
		gluaBin = bin
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "glua-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	gluaBin = filepath.Join(dir, "glua")
	build := exec.Command("go", "build", "-o", gluaBin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building glua: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// result is what one run of an interpreter produced.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// invocation is one run of an interpreter: where, with which environment
// and input.
type invocation struct {
	dir   string   // working directory
	env   []string // added to the clean environment
	stdin string
	args  []string
}

// cleanEnv is the test process's environment without anything that changes
// how lua or glua behave, and with a home that has no glua configuration.
func cleanEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GLUA_") || strings.HasPrefix(name, "LUA_") || name == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+t.TempDir())
}

// exec runs program, named name in its argv[0] (what arg[-n] and messages
// show), and returns what it did.
func (inv invocation) run(t *testing.T, program, name string) result {
	t.Helper()
	cmd := exec.Command(program, inv.args...)
	cmd.Args[0] = name
	cmd.Dir = inv.dir
	cmd.Env = append(cleanEnv(t), inv.env...)
	cmd.Stdin = strings.NewReader(inv.stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		r.code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running %s: %v", program, err)
	}
	return r
}

// glua runs the built glua on the CPU backend, so that tests behave the
// same with or without a GPU.
func (inv invocation) glua(t *testing.T) result {
	t.Helper()
	inv.env = append([]string{"GLUA_BACKEND=cpu"}, inv.env...)
	return inv.run(t, gluaBin, "glua")
}

// runGlua runs glua in a fresh directory with the given arguments.
func runGlua(t *testing.T, args ...string) result {
	t.Helper()
	return invocation{dir: t.TempDir(), args: args}.glua(t)
}
