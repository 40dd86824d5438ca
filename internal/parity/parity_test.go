package parity_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	_ "github.com/gluaproject/glua/bindings"
	"github.com/gluaproject/glua/config"
	_ "github.com/gluaproject/glua/cpu"
	_ "github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/internal/parity"
	"github.com/gluaproject/glua/internal/scriptargs"
	"github.com/gluaproject/glua/runtime"
)

// only runs the items of one group (bindings, scripts, lua-api or
// kernel-language) and compares only its transcripts.
var only = flag.String("parity.only", "", "run only this group's scripts or examples: bindings, scripts, lua-api or kernel-language")

// root is the repository's root, from this package's directory.
const root = "../.."

// deviceSpecific is how many of each document's examples carry the marker
// <!-- parity: device-specific: reason -->: one that prints what describes
// the device or the pool strategy (a name, a capacity, a timing). It runs
// on every backend, but only whether it raised, and what, is compared.
var deviceSpecific = map[string]int{
	"docs/lua-api.md":         10,
	"docs/kernel-language.md": 0,
}

// notRun is how many of each document's examples carry the marker
// <!-- parity: not run: reason --> (an example that cannot run on its
// own: it needs two processes, or a 40 GB file). The test fails when the
// count changes, so that the list is a decision, not a drift.
var notRun = map[string]int{
	"docs/lua-api.md":         4,
	"docs/kernel-language.md": 0,
}

// givenFile defines the names the documents' examples use without making
// them (A, B, C, x, y, n, ...), small; an example that needs more says so
// in a <!-- parity: given lua --> marker before it.
const givenFile = "testdata/given.lua"

// An item is one script or example, run in a runtime of its own.
type item struct {
	name  string   // its line in the transcript: "=== " + name
	group string   // the transcript file it is recorded in
	dir   string   // the directory it runs in, from the root; "" for a temporary one
	setup []string // Lua files (from the root) run first
	given string   // Lua run first, after setup
	file  string   // the script, relative to dir; or
	code  string   // the example's code
	args  []string // arg[1], ...
	// cpuMemory is the cpu backend's capacity: 1GiB, as in the
	// conformance tests, but for the documents' examples, written for a
	// GPU (pool.set_limit{soft = "2GiB"}), which get 16GiB.
	cpuMemory string
	// deviceSpecific leaves what it printed out of the transcript.
	deviceSpecific bool
}

// run is a backend and pool strategy.
type run struct{ backend, strategy string }

// runs are the cpu backend, and where a GPU is present (as it must be under
// GLUA_REQUIRE_CUDA=1) the cuda backend under each pool strategy.
func runs(t *testing.T) []run {
	out := []run{{"cpu", "caching"}}
	rt, err := runtime.New(runtime.Options{Backend: "cuda", Config: defaultConfig()})
	if err == nil {
		rt.Close()
		return append(out, run{"cuda", "caching"}, run{"cuda", "none"}, run{"cuda", "cuda"})
	}
	if os.Getenv("GLUA_REQUIRE_CUDA") == "1" {
		t.Fatalf("GLUA_REQUIRE_CUDA=1 but the cuda backend is unavailable: %v", err)
	}
	t.Logf("cuda backend unavailable, running the cpu backend only: %v", err)
	return out
}

func defaultConfig() *config.Config {
	c := config.Default()
	return &c
}

// TestEveryScriptAndExampleReadsTheSameOnEveryBackend runs every
// conformance script of bindings/testdata (and its messages), every
// example script of scripts/ at its small size (scripts/testdata/
// small_args.txt; not the benchmarks of scripts/bench, whose output is
// timings, which scripts' own test runs), and every Lua example of
// docs/lua-api.md and docs/kernel-language.md, on each backend and pool
// strategy, and compares what each printed and the error it ended with
// (parity.Compare: numbers within their dtype's tolerance, messages
// identical, after parity.Rules). On a GPU machine every run is compared
// with the cpu backend's; everywhere, the cpu backend's transcripts are
// compared with those recorded in testdata/*.txt, which a GPU machine
// records:
//
//	GLUA_REQUIRE_CUDA=1 GLUA_PARITY_RECORD=1 go test ./internal/parity -count=1
//
// writes the cuda backend's transcripts there (GLUA_PARITY_RECORD=dir
// writes them to dir instead), after checking that they agree with the
// cpu backend's.
func TestEveryScriptAndExampleReadsTheSameOnEveryBackend(t *testing.T) {
	items := collect(t)
	var reference map[string]string // the cpu backend's transcripts, by group
	record, recorded := os.Getenv("GLUA_PARITY_RECORD"), false
	for _, r := range runs(t) {
		started := time.Now()
		got := transcripts(t, r, items)
		t.Logf("%s/%s: %d scripts and examples in %.1fs", r.backend, r.strategy, len(items), time.Since(started).Seconds())
		if reference == nil {
			reference = got
			continue
		}
		for group, text := range got {
			want := reference[group]
			if r.strategy == "cuda" {
				for name := range belowDriverChunk {
					want, text = dropItem(want, name), dropItem(text, name)
				}
			}
			for _, d := range parity.Compare(want, text) {
				t.Errorf("%s: %s/%s differs from the cpu backend at %s", group, r.backend, r.strategy, d)
			}
		}
		if r.strategy == "caching" && record != "" {
			write(t, record, r.backend, got)
			recorded = true
		}
	}
	if record != "" {
		if !recorded {
			write(t, record, "cpu", reference)
		}
		return
	}
	for group, text := range reference {
		recorded, err := os.ReadFile(filepath.Join("testdata", group+".txt"))
		if err != nil {
			t.Errorf("%v (GLUA_PARITY_RECORD=1 records it)", err)
			continue
		}
		header, body, _ := strings.Cut(string(recorded), "\n")
		if !strings.Contains(header, "cuda") {
			t.Logf("testdata/%s.txt was %s, not on a GPU: GLUA_REQUIRE_CUDA=1 GLUA_PARITY_RECORD=1 go test ./internal/parity records it there", group, strings.TrimPrefix(header, "# "))
		}
		for _, d := range parity.Compare(body, text) {
			t.Errorf("%s: the cpu backend differs from testdata/%s.txt (%s) at %s", group, group, strings.TrimPrefix(header, "# "), d)
		}
	}
}

// write records the transcripts, one file per group, under dir ("1": this
// package's testdata).
func write(t *testing.T, dir, backend string, got map[string]string) {
	if dir == "1" {
		dir = "testdata"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for group, text := range got {
		header := fmt.Sprintf("# recorded on the %s backend\n", backend)
		if err := os.WriteFile(filepath.Join(dir, group+".txt"), []byte(header+text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("recorded the %s backend's transcripts in %s", backend, dir)
}

// transcripts runs every item on r and returns the normalised transcripts,
// by group.
func transcripts(t *testing.T, r run, items []item) map[string]string {
	out := map[string]*strings.Builder{}
	for _, it := range items {
		if out[it.group] == nil {
			out[it.group] = &strings.Builder{}
		}
		started := time.Now()
		text := runItem(t, r, it)
		if d := time.Since(started); d > 2*time.Second {
			t.Logf("%s/%s: %s took %.1fs", r.backend, r.strategy, it.name, d.Seconds())
		}
		fmt.Fprintf(out[it.group], "=== %s\n%s", it.name, text)
	}
	got := map[string]string{}
	for group, b := range out {
		got[group] = b.String()
	}
	return got
}

// runItem runs one item in a runtime of its own and returns what it
// printed, then "error: " and the error it ended with, normalised.
func runItem(t *testing.T, r run, it item) string {
	var out bytes.Buffer
	tmp := t.TempDir()
	dir := tmp
	if it.dir != "" {
		dir = filepath.Join(root, it.dir)
	}
	abs := func(p string) string {
		a, err := filepath.Abs(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	rootAbs := abs("")
	setup := make([]string, len(it.setup))
	for i, s := range it.setup {
		setup[i] = abs(s)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	rt, err := runtime.New(runtime.Options{Backend: r.backend, MemoryPool: r.strategy, Config: defaultConfig(), CPUMemory: it.cpuMemory, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	L := rt.Lua()
	L.SetGlobal("tmpdir", lua.LString(tmp))
	L.SetGlobal("say", L.GetGlobal("print"))
	argt := L.NewTable()
	argt.RawSetInt(0, lua.LString(it.file))
	for i, a := range it.args {
		argt.RawSetInt(i+1, lua.LString(a))
	}
	L.SetGlobal("arg", argt)
	device := ""
	if err := rt.DoString(`parity_device = require("cuda").device().name`); err == nil {
		device = L.GetGlobal("parity_device").String()
		L.SetGlobal("parity_device", lua.LNil)
	}
	err = nil
	for _, s := range setup {
		if err = rt.DoFile(s); err != nil {
			t.Fatalf("%s: setup %s: %v", it.name, s, err)
		}
	}
	if it.given != "" {
		if err = rt.DoString(it.given); err != nil {
			t.Fatalf("%s: the given names: %v", it.name, err)
		}
	}
	if it.file != "" {
		err = rt.DoFile(it.file)
	} else {
		err = rt.DoString(it.code)
	}
	if it.deviceSpecific {
		out.Reset()
		if err == nil {
			out.WriteString("ran; what it printed is the device's\n")
		}
	}
	if err != nil {
		fmt.Fprintf(&out, "error: %v\n", err)
	}
	replace := map[string]string{tmp: "$TMPDIR", device: "<device>", rootAbs: "<root>"}
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		replace[real] = "$TMPDIR"
	}
	return parity.Normalise(out.String(), replace)
}

// collect lists the items: the conformance scripts, the example scripts
// and the documents' examples.
func collect(t *testing.T) []item {
	var items []item
	conformance, _ := filepath.Glob(filepath.Join(root, "bindings", "testdata", "*.lua"))
	messages, _ := filepath.Glob(filepath.Join(root, "bindings", "testdata", "messages", "*.lua"))
	if len(conformance) == 0 || len(messages) == 0 {
		t.Fatal("no conformance scripts in bindings/testdata")
	}
	for _, s := range conformance {
		rel := "testdata/" + filepath.Base(s)
		items = append(items, item{name: "bindings/" + rel, group: "bindings", dir: "bindings", setup: []string{"bindings/testdata/lib/check.lua"}, file: rel, cpuMemory: "1GiB"})
	}
	for _, s := range messages {
		rel := "testdata/messages/" + filepath.Base(s)
		items = append(items, item{name: "bindings/" + rel, group: "bindings", dir: "bindings", setup: []string{"bindings/testdata/lib/try.lua"}, file: rel, cpuMemory: "1GiB"})
	}
	small, err := scriptargs.Read(filepath.Join(root, "scripts", "testdata", "small_args.txt"))
	if err != nil {
		t.Fatal(err)
	}
	examples, _ := filepath.Glob(filepath.Join(root, "scripts", "*.lua"))
	if len(examples) == 0 {
		t.Fatal("no example scripts in scripts/")
	}
	for _, s := range examples {
		name := filepath.Base(s)
		items = append(items, item{name: "scripts/" + name + " " + strings.Join(small[name], " "), group: "scripts", dir: "scripts", file: name, args: small[name], cpuMemory: "1GiB"})
	}
	for _, doc := range []string{"docs/lua-api.md", "docs/kernel-language.md"} {
		items = append(items, docExamples(t, doc)...)
	}
	if *only == "" {
		return items
	}
	var kept []item
	for _, it := range items {
		if it.group == *only {
			kept = append(kept, it)
		}
	}
	if len(kept) == 0 {
		t.Fatalf("-parity.only=%s: no such group (bindings, scripts, lua-api, kernel-language)", *only)
	}
	return kept
}

var (
	fence       = regexp.MustCompile("(?s)((?:<!-- parity: [^\n]*? -->\n)*)```lua\n(.*?)```")
	markerLine  = regexp.MustCompile("<!-- parity: ([^\n]*?) -->")
	headings    = regexp.MustCompile("(?m)^#+ .*$")
	notRunNote  = regexp.MustCompile(`^not run: \S`)
	deviceNote  = regexp.MustCompile(`^device-specific: \S`)
	givenMarker = "given "
)

// docExamples are doc's ```lua blocks, each named by the heading it is
// under (so that editing the text above it renames nothing), each an item
// run in a temporary
// directory after testdata/given.lua and its own given marker, if any;
// those marked not run are counted against notRun.
func docExamples(t *testing.T, doc string) []item {
	text, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		t.Fatal(err)
	}
	group := strings.TrimSuffix(filepath.Base(doc), ".md")
	var items []item
	skipped, specific := 0, 0
	seen := map[string]int{} // examples under each heading, which names them
	for _, m := range fence.FindAllStringSubmatchIndex(string(text), -1) {
		line := 1 + bytes.Count(text[:m[4]], []byte("\n"))
		name := doc
		if h := headings.FindAllString(string(text[:m[0]]), -1); len(h) > 0 {
			name += " " + strings.TrimSpace(h[len(h)-1])
		}
		seen[name]++
		if seen[name] > 1 {
			name += fmt.Sprintf(" (%d)", seen[name])
		}
		it := item{name: name, group: group, setup: []string{"internal/parity/" + givenFile}, code: string(text[m[4]:m[5]]), cpuMemory: "16GiB"}
		skip := false
		for _, mm := range markerLine.FindAllStringSubmatch(string(text[m[2]:m[3]]), -1) {
			switch marker := mm[1]; {
			case notRunNote.MatchString(marker):
				skip = true
			case deviceNote.MatchString(marker):
				specific++
				it.deviceSpecific = true
			case strings.HasPrefix(marker, givenMarker):
				it.given += strings.TrimPrefix(marker, givenMarker) + "\n"
			default:
				t.Errorf("%s:%d: <!-- parity: %s -->: a marker says \"not run: why\", \"device-specific: why\" or \"given lua\"", doc, line, marker)
			}
		}
		if skip {
			skipped++
			continue
		}
		items = append(items, it)
	}
	if skipped != notRun[doc] {
		t.Errorf("%s: %d examples are marked not run, the test expects %d: run the new one, or change notRun in parity_test.go", doc, skipped, notRun[doc])
	}
	if specific != deviceSpecific[doc] {
		t.Errorf("%s: %d examples are marked device-specific, the test expects %d: compare the new one's output, or change deviceSpecific in parity_test.go", doc, specific, deviceSpecific[doc])
	}
	return items
}

// belowDriverChunk are the items whose hard limit is below what the
// driver's stream-ordered pool reserves at a time (32 MiB on an H200), so
// that under pool strategy "cuda" their first allocation is refused; the
// caching and none strategies, and the CPU, run them. docs/lua-api.md says
// so under the strategies.
var belowDriverChunk = map[string]string{
	"scripts/out_of_core.lua 200 1MiB": "a 1 MiB hard limit",
}

// dropItem removes the section of the item named name ("=== name" and the
// lines up to the next item's) from a transcript.
func dropItem(text, name string) string {
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	skipping := false
	for _, l := range lines {
		if strings.HasPrefix(l, "=== ") {
			skipping = strings.TrimRight(l, "\n") == "=== "+name
		}
		if !skipping {
			b.WriteString(l)
		}
	}
	return b.String()
}
