package glua_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gluaproject/glua/internal/chromiumtest"
)

// readmeTestCommands are the commands README.md's "Run the tests" gives,
// as indented lines up to the next heading.
func readmeTestCommands(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "Run the tests")
	if start < 0 {
		t.Fatal(`README.md has no "Run the tests"`)
	}
	text = text[start:]
	if end := strings.Index(text, "\n#"); end >= 0 {
		text = text[:end]
	}
	var cmds []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "    ") && strings.Contains(line, "go test") {
			cmds = append(cmds, strings.TrimSpace(line))
		}
	}
	if len(cmds) == 0 {
		t.Fatal(`README.md's "Run the tests" gives no go test command`)
	}
	return cmds
}

// ciScript is .ci/run without its comments.
func ciScript(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	return lines
}

// stepLabel is how .ci/run labels a step: step "label" command...
var stepLabel = regexp.MustCompile(`^step "[^"]*" `)

// CI runs the test commands README.md tells a person to run, the same
// ones and no others, and each go test has a -timeout of its own, so that
// a hang fails within CI's limit instead of Go's default ten minutes a
// package.
func TestCIRunsTheTestCommandsTheReadmeGives(t *testing.T) {
	readme := readmeTestCommands(t)
	var ci []string
	for _, line := range ciScript(t) {
		if cmd := stepLabel.ReplaceAllString(line, ""); strings.Contains(cmd, "go test") {
			ci = append(ci, cmd)
		}
	}
	for _, cmd := range readme {
		if !slices.Contains(ci, cmd) {
			t.Errorf("README.md gives %q; .ci/run does not run it", cmd)
		}
	}
	for _, cmd := range ci {
		if !slices.Contains(readme, cmd) {
			t.Errorf(".ci/run runs %q; README.md's \"Run the tests\" does not give it", cmd)
		}
		if !strings.Contains(cmd, " -timeout ") {
			t.Errorf("%q has no -timeout", cmd)
		}
	}
}

// .ci/run looks for Chromium under the names the browser test tries,
// so that it installs one only where the test would find none.
func TestCILooksForChromiumUnderTheNamesTheTestTries(t *testing.T) {
	for _, line := range ciScript(t) {
		if names, ok := strings.CutPrefix(line, "chromium_names=("); ok {
			got := strings.Fields(strings.TrimSuffix(names, ")"))
			if !slices.Equal(got, chromiumtest.Names) {
				t.Errorf(".ci/run looks for Chromium as %q; the test tries %q", got, chromiumtest.Names)
			}
			return
		}
	}
	t.Error(".ci/run sets no chromium_names")
}

// packagePath is the go command's ./dir for the package of a file.
func packagePath(file string) string {
	dir := filepath.ToSlash(filepath.Dir(file))
	if dir == "." {
		return "."
	}
	return "./" + dir
}

// notRaced are the packages that start goroutines but are not run under
// the race detector, each with the reason (.ci/run says the same).
var notRaced = map[string]string{
	"./cmd/glua": "its goroutines run in the glua binary its tests start, built without -race",
	"./cuda":     "it needs a GPU",
}

// Every package whose code has a go statement is run under the race
// detector in CI, or is named in notRaced with the reason; a new
// concurrent package cannot be left out by accident.
func TestCIRacesEveryPackageThatStartsGoroutines(t *testing.T) {
	var raced []string
	for _, cmd := range readmeTestCommands(t) {
		if strings.Contains(cmd, " -race ") {
			for _, arg := range strings.Fields(cmd) {
				if strings.HasPrefix(arg, "./") {
					raced = append(raced, arg)
				}
			}
		}
	}
	if len(raced) == 0 {
		t.Fatal(`README.md's "Run the tests" gives no go test -race command`)
	}
	starts := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if _, ok := n.(*ast.GoStmt); ok {
				starts[packagePath(path)] = true
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range starts {
		if !slices.Contains(raced, pkg) && notRaced[pkg] == "" {
			t.Errorf("%s starts goroutines but is not in the race command of README.md and .ci/run", pkg)
		}
	}
	for pkg := range notRaced {
		if !starts[pkg] {
			t.Errorf("%s starts no goroutine any more: drop it from notRaced", pkg)
		}
		if slices.Contains(raced, pkg) {
			t.Errorf("%s is raced: drop it from notRaced", pkg)
		}
	}
	if len(starts) < 5 {
		t.Errorf("found go statements in only %d packages: %v", len(starts), starts)
	}
}
