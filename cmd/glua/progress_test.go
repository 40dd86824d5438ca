package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// tmux runs a command in a detached tmux session of the given size and
// returns a function that reads the screen; the session ends with the test.
// It skips without tmux, unless GLUA_REQUIRE_TMUX=1 (as in CI).
func tmux(t *testing.T, command string) (screen func() string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("GLUA_REQUIRE_TMUX") == "1" {
			t.Fatal("GLUA_REQUIRE_TMUX=1 but tmux is not installed")
		}
		t.Skip("tmux is not installed")
	}
	session := "glua-test-" + strings.ReplaceAll(t.Name(), "/", "-")
	out, err := exec.Command("tmux", "new-session", "-d", "-s", session, "-x", "100", "-y", "12", command).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", session).Run() })
	return func() string {
		out, err := exec.Command("tmux", "capture-pane", "-p", "-t", session).Output()
		if err != nil {
			t.Fatalf("tmux capture-pane: %v", err)
		}
		return string(out)
	}
}

// waitFor reads the screen until it matches re, or fails after timeout.
func waitFor(t *testing.T, screen func() string, re *regexp.Regexp, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := screen()
		if re.MatchString(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %s:\n%s", re, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A person watching a long batch loop in a terminal sees one line of
// progress on stderr, redrawn in place, and nothing of it once the loop ends.
func TestBatchProgressLineInATerminal(t *testing.T) {
	script := filepath.Join(t.TempDir(), "slow.lua")
	src := `local batch = require("batch")
local batches = {}
for i = 1, 20 do batches[i] = { { i, i } } end
for i, x in batch.iter(batches, { progress = true }) do
  local t = os.clock()
  while os.clock() - t < 0.15 do end
end
print("loop done")
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	screen := tmux(t, gluaBin+" --backend cpu "+script+"; sleep 30")
	during := waitFor(t, screen, regexp.MustCompile(`batch \d+/20  \d+ B  [0-9.]+ GB/s  ETA \d+s`), 10*time.Second)
	if n := strings.Count(during, "batch "); n != 1 {
		t.Fatalf("%d progress lines on the screen, want one redrawn in place:\n%s", n, during)
	}
	after := waitFor(t, screen, regexp.MustCompile(`loop done`), 15*time.Second)
	if strings.Contains(after, "GB/s") {
		t.Fatalf("the progress line is still on the screen after the loop:\n%s", after)
	}
}
