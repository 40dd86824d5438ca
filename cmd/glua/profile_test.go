package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gluaproject/glua/internal/chromiumtest"
)

// artifacts is where a test keeps what a person may want to look at: the
// directory GLUA_ARTIFACTS names, else the test's own temporary one.
func artifacts(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("GLUA_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

// headless runs the browser on page with args, and returns its stdout.
func headless(t *testing.T, browser, page string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=5000"}, args...)
	cmd := exec.CommandContext(ctx, browser, append(args, "file://"+page)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", browser, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// The memory profile of the main job opens in a real browser: its script
// runs without error and the timeline and the segments are laid out. The
// screenshot is kept for a person to look at.
func TestMemoryProfileOfMatmulDrawsInABrowser(t *testing.T) {
	browser := chromiumtest.Find(t)
	dir := artifacts(t)
	page := filepath.Join(dir, "matmul-memory-profile.html")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	r := invocation{dir: root, args: []string{"--memory-profile", page, "scripts/matmul.lua", "96", "4"}}.glua(t)
	if r.code != 0 || !strings.Contains(r.stdout, "naive") {
		t.Fatalf("glua --memory-profile scripts/matmul.lua:\n%s", r)
	}
	dom := headless(t, browser, page, "--dump-dom")
	body := regexp.MustCompile(`<body[^>]*>`).FindString(dom)
	if !strings.Contains(body, `data-rendered="ok"`) {
		msg := regexp.MustCompile(`(?s)<p id="script-error"[^>]*>(.*?)</p>`).FindStringSubmatch(dom)
		t.Fatalf("the page's script did not finish: %s %q", body, msg)
	}
	attr := func(name string) int {
		m := regexp.MustCompile(name + `="(\d+)"`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("the page's body lacks %s: %s", name, body)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	// matmul.lua allocates at six lines: the inputs, each pattern's arrays.
	if n := attr("data-bands"); n < 3 {
		t.Errorf("%d bands in the timeline; want one per allocating line, at least 3", n)
	}
	if n := attr("data-pieces"); n < 3 {
		t.Errorf("%d pieces in the segments; want the arrays live at the peak", n)
	}
	if w := attr("data-timeline-width"); w < 500 {
		t.Errorf("the bands were laid out %d wide; want most of the timeline's 1168", w)
	}
	for _, want := range []string{`id="segments-peak"`, `id="reserved"`, "Memory profile: scripts/matmul.lua", "scripts/matmul.lua:"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	shot := filepath.Join(dir, "matmul-memory-profile.png")
	headless(t, browser, page, "--screenshot="+shot, "--window-size=1400,1800")
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 20<<10 {
		t.Fatalf("no screenshot of the profile (%v)", err)
	}
	t.Logf("profile %s, screenshot %s", page, shot)
}

// A script that runs out of memory still leaves its profile, with the
// error marked; the error itself names the line that leaks.
func TestMemoryProfileIsWrittenWhenTheScriptRunsOutOfMemory(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "mem.html")
	script, err := filepath.Abs(filepath.Join("..", "..", "runtime", "testdata", "leak.lua"))
	if err != nil {
		t.Fatal(err)
	}
	r := invocation{dir: dir, args: []string{"--hard-limit", "64MiB", "--memory-profile", page, script}}.glua(t)
	if r.code != 1 || !strings.Contains(r.stderr, "out of CPU backend memory") || !strings.Contains(r.stderr, "leak.lua:8: 60.00 MiB in 15 arrays") {
		t.Fatalf("a leaking script under a 64 MiB limit:\n%s", r)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="oom-1"`, `id="segments-oom"`, `id="segments-peak"`, "leak.lua:8", "hard limit 64 MiB"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the profile of the failed run lacks %q", want)
		}
	}
}

// A profile that cannot be written is an error before the script runs.
func TestMemoryProfileToAnUnwritablePathFailsBeforeTheScript(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "no", "such", "dir", "mem.html")
	r := invocation{dir: dir, args: []string{"--memory-profile", bad, "-e", `print("ran")`}}.glua(t)
	if r.code != 1 || strings.Contains(r.stdout, "ran") || r.stderr != "glua: --memory-profile: cannot open "+bad+": No such file or directory\n" {
		t.Fatalf("--memory-profile to %s:\n%s", bad, r)
	}
}

// TestAProfileRunEndedEarlyKeepsThePreviousProfile: the profile is written
// beside its file and renamed into place when whole, so a run ended before
// it is written (--timeout's forced exit, os.exit) leaves the previous
// profile, not an empty file, and no temporary file behind; a run that
// ends replaces it.
func TestAProfileRunEndedEarlyKeepsThePreviousProfile(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "mem.html")
	const previous = "<html>the previous profile</html>"
	if err := os.WriteFile(page, []byte(previous), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	unchanged := func(how string) {
		t.Helper()
		data, err := os.ReadFile(page)
		if err != nil || string(data) != previous {
			t.Fatalf("after %s the profile is %.80q (%v)", how, data, err)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 2 {
			t.Fatalf("after %s the directory holds %d entries: %v", how, len(entries), entries)
		}
	}
	// Opening a FIFO no one writes blocks inside Go: --timeout ends the
	// process by force.
	r := invocation{dir: dir, args: []string{"--timeout", "200ms", "--memory-profile", page, "-e", `require("cuda").zeros({16}); io.open("fifo")`}}.glua(t)
	if r.code != 1 || !strings.Contains(r.stderr, "stopped after the 200ms --timeout") {
		t.Fatalf("a run stuck in a Go call under --timeout:\n%s", r)
	}
	unchanged("--timeout's forced exit")
	r = invocation{dir: dir, args: []string{"--memory-profile", page, "-e", `require("cuda").zeros({16}); os.exit(3)`}}.glua(t)
	if r.code != 3 {
		t.Fatalf("os.exit(3):\n%s", r)
	}
	unchanged("os.exit")
	r = invocation{dir: dir, args: []string{"--memory-profile", page, "-e", `require("cuda").zeros({16})`}}.glua(t)
	html, err := os.ReadFile(page)
	if r.code != 0 || err != nil || !strings.HasPrefix(string(html), "<!DOCTYPE html>") {
		t.Fatalf("a run that ends: %v\n%.80q\n%s", err, html, r)
	}
	if info, err := os.Stat(page); err != nil || info.Mode().Perm() != 0o644 {
		t.Fatalf("the new profile's permissions: %v, %v", info.Mode(), err)
	}
}
