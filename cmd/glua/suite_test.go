package main

import (
	"bufio"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/internal/luatest"
)

// compatDoc lists, in its table of suite files, the official Lua 5.1 tests
// that glua is allowed to fail, each with the reason.
const compatDoc = "../../docs/lua-compat.md"

// suiteTimeout bounds one file; lua5.1 runs the slowest it passes,
// constructs.lua, in a quarter of a second.
const suiteTimeout = 90 * time.Second

// TestLua51SuitePassesWhereLua51Does runs each file of the official Lua 5.1
// test suite, as shipped with the gopher-lua module that go.mod pins, the
// way its README says: `lua FILE` in the suite's directory. Every file that
// lua5.1 passes must pass in glua, unless docs/lua-compat.md names it with
// the reason; a file named there that now passes is reported too, so the
// document stays true.
func TestLua51SuitePassesWhereLua51Does(t *testing.T) {
	lua := luatest.Lua51(t)
	suite := suiteCopy(t)
	allowed := allowedSuiteFailures(t)
	files, err := filepath.Glob(filepath.Join(suite, "*.lua"))
	if err != nil || len(files) < 20 {
		t.Fatalf("found %d suite files in %s (%v)", len(files), suite, err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		if name == "all.lua" { // runs the others, in one process
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ref := runSuiteFile(t, suite, lua, name)
			if ref.code != 0 {
				t.Skipf("lua5.1 fails %s too: %s", name, tail(ref.stderr, 1))
			}
			got := runSuiteFile(t, suite, gluaBin, name)
			reason, isAllowed := allowed[name]
			switch {
			case got.code != 0 && !isAllowed:
				t.Errorf("glua fails %s, lua5.1 passes it; stderr ends:\n%s", name, tail(got.stderr, 12))
			case got.code == 0 && isAllowed:
				t.Errorf("glua passes %s, which %s says it fails (%s): update the document", name, compatDoc, reason)
			case got.code == 0 && digits.ReplaceAllString(got.stdout, "N") != digits.ReplaceAllString(ref.stdout, "N"):
				t.Errorf("glua passes %s but prints\n%s\nwhere lua5.1 prints\n%s", name, got.stdout, ref.stdout)
			}
		})
	}
}

// suiteCopy copies the suite out of the read-only module cache, since some
// files write beside themselves.
func suiteCopy(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yuin/gopher-lua").Output()
	if err != nil {
		t.Fatalf("locating gopher-lua's module (run go mod download): %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "_lua5.1-tests")
	dst := t.TempDir()
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying the suite from %s: %v", src, err)
	}
	return dst
}

func runSuiteFile(t *testing.T, dir, program, file string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), suiteTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, file)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(t), "GLUA_BACKEND=cpu")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if err != nil {
		r.code = -1
		if exitErr, ok := err.(*exec.ExitError); ok && ctx.Err() == nil {
			r.code = exitErr.ExitCode()
		} else if ctx.Err() != nil {
			r.stderr += "\n(killed after " + suiteTimeout.String() + ")"
		}
	}
	return r
}

// digits are left out of the comparison of what a file prints: sort.lua
// prints its timings and how many comparisons its sort made.
var digits = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)

// suiteRow is a row of the document's suite table: | `file.lua` | reason |.
var suiteRow = regexp.MustCompile("^\\|\\s*`([a-z0-9]+\\.lua)`\\s*\\|\\s*(.+?)\\s*\\|")

func allowedSuiteFailures(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(compatDoc)
	if err != nil {
		t.Fatalf("reading the list of allowed failures: %v", err)
	}
	defer f.Close()
	allowed := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := suiteRow.FindStringSubmatch(sc.Text()); m != nil {
			allowed[m[1]] = m[2]
		}
	}
	return allowed
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
