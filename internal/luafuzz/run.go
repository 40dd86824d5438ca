package luafuzz

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Outcome is what one interpreter did with a program.
type Outcome struct {
	Stdout string
	// Message is the first line of stderr with the interpreter's name
	// taken off: the error message, without the traceback (gopher-lua's
	// frames are not lua5.1's).
	Message  string
	Code     int
	TimedOut bool
}

func (o Outcome) String() string {
	s := fmt.Sprintf("exit %d", o.Code)
	if o.TimedOut {
		s = "timed out"
	}
	return s + "\n--- stdout\n" + o.Stdout + "--- message\n" + o.Message + "\n"
}

// Runner runs programs the way a user does: as a script file given to the
// interpreter's command, here lua5.1 and glua on the CPU backend.
type Runner struct {
	Lua51, Glua string
	// Timeout bounds each run; a generated program takes milliseconds, so
	// one that runs out of time hangs.
	Timeout time.Duration
}

// scriptName is the file each program is written to, so that messages
// name the same chunk in both interpreters.
const scriptName = "fuzz.lua"

// Run runs src in both interpreters, at once.
func (r Runner) Run(src string) (want, got Outcome, err error) {
	dir, err := os.MkdirTemp("", "luafuzz")
	if err != nil {
		return want, got, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, scriptName), []byte(src), 0o644); err != nil {
		return want, got, err
	}
	var wantErr error
	done := make(chan struct{})
	go func() {
		want, wantErr = r.run(dir, r.Lua51)
		close(done)
	}()
	got, err = r.run(dir, r.Glua)
	<-done
	return want, got, errors.Join(wantErr, err)
}

// interpreterName is the prefix of a message, lua.c's progname.
var interpreterName = regexp.MustCompile(`^[^:\s]+: `)

func (r Runner) run(dir, program string) (Outcome, error) {
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, scriptName)
	cmd.Dir = dir
	cmd.Env = environment(dir)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	o := Outcome{Stdout: stdout.String()}
	first, _, _ := strings.Cut(stderr.String(), "\n")
	o.Message = interpreterName.ReplaceAllString(first, "")
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		o.TimedOut, o.Code = true, -1
	case errors.As(err, &exitErr):
		o.Code = exitErr.ExitCode()
	case err != nil:
		return o, fmt.Errorf("running %s: %w", program, err)
	}
	return o, nil
}

// maxOutput bounds what is kept of a run's output: a program that loops
// back into a section that prints can write hundreds of megabytes before
// its time is up, and a generated program prints a few kilobytes.
const maxOutput = 1 << 20

// capped keeps the first maxOutput bytes written to it.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxOutput - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// environment is the process's own without what changes how lua or glua
// behave, with glua on the CPU backend so that no GPU is looked for.
func environment(home string) []string {
	env := []string{"GLUA_BACKEND=cpu", "HOME=" + home}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GLUA_") || strings.HasPrefix(name, "LUA_") || name == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	return env
}
