package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// What a person sees and types in a terminal is tested in a real one: a
// tmux pane, typed into with send-keys and read with capture-pane.

// tmuxSocket keeps the tests' sessions on a tmux server of their own, out
// of the way of the user's.
const tmuxSocket = "glua-test"

var sessions atomic.Int64

// terminal is a tmux session running one command.
type terminal struct {
	t       *testing.T
	session string
}

// startTerminal runs command in a detached tmux session of the given size;
// the session ends with the test. It skips without tmux, unless
// GLUA_REQUIRE_TMUX=1 (as in CI).
func startTerminal(t *testing.T, width, height int, command string) *terminal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("GLUA_REQUIRE_TMUX") == "1" {
			t.Fatal("GLUA_REQUIRE_TMUX=1 but tmux is not installed")
		}
		t.Skip("tmux is not installed")
	}
	term := &terminal{t: t, session: fmt.Sprintf("glua-test-%d-%d", os.Getpid(), sessions.Add(1))}
	// The server exits with its last session; a session started while it
	// is going fails, and the next try starts a new server.
	for try := 1; ; try++ {
		out, err := term.tmux("new-session", "-d", "-s", term.session, "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), command)
		if err == nil {
			break
		}
		if try == 3 {
			t.Fatalf("tmux new-session: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Cleanup(func() { term.tmux("kill-session", "-t", term.session) })
	return term
}

func (term *terminal) tmux(args ...string) ([]byte, error) {
	return exec.Command("tmux", append([]string{"-L", tmuxSocket}, args...)...).CombinedOutput()
}

// screen is what the pane shows now.
func (term *terminal) screen() string {
	term.t.Helper()
	out, err := term.tmux("capture-pane", "-p", "-t", term.session)
	if err != nil {
		term.t.Fatalf("tmux capture-pane: %v\n%s", err, out)
	}
	return string(out)
}

// keys presses keys by tmux's names for them: Enter, Tab, Up, C-c, C-d.
func (term *terminal) keys(keys ...string) {
	term.t.Helper()
	if out, err := term.tmux(append([]string{"send-keys", "-t", term.session}, keys...)...); err != nil {
		term.t.Fatalf("tmux send-keys %q: %v\n%s", keys, err, out)
	}
}

// typeText types text as it is, newlines included, as a paste does.
func (term *terminal) typeText(text string) {
	term.t.Helper()
	if out, err := term.tmux("send-keys", "-t", term.session, "-l", text); err != nil {
		term.t.Fatalf("tmux send-keys -l: %v\n%s", err, out)
	}
}

// enter types a line and presses Enter.
func (term *terminal) enter(line string) {
	term.t.Helper()
	term.typeText(line)
	term.keys("Enter")
}

// waitFor reads the screen until it matches pattern, or fails after
// timeout, and returns the screen.
func (term *terminal) waitFor(pattern string, timeout time.Duration) string {
	term.t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(timeout)
	for {
		s := term.screen()
		if re.MatchString(s) {
			return s
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("the screen never showed %s:\n%s", pattern, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// shellQuote quotes s for the shell tmux runs the command with.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// gluaCommand is a shell command running the built glua with args, in an
// environment holding only what a terminal needs, the given variables and
// the CPU backend: tmux's server passes on its own environment otherwise.
func gluaCommand(env []string, args ...string) string {
	parts := []string{`env -i PATH="$PATH" TERM="$TERM" GLUA_BACKEND=cpu`}
	for _, kv := range env {
		parts = append(parts, shellQuote(kv))
	}
	parts = append(parts, shellQuote(gluaBin))
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}
