package luafuzz

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gluaproject/glua/internal/luatest"
)

// The long run: go test ./internal/luafuzz -run Long -timeout 2h -args -n 20000
var (
	longN      = flag.Int("n", 0, "TestLong: how many programs to check (0 skips it)")
	longFirst  = flag.Uint64("seed", 1, "TestLong: the first seed")
	longShrink = flag.Bool("shrink", true, "TestLong: shrink the first program of each class")
)

// ciPrograms is how many programs the CI test checks: enough to meet every
// feature many times, few enough for well under a minute on two cores.
const ciPrograms = 200

var (
	buildOnce sync.Once
	gluaBin   string
	buildErr  error
)

// runner builds cmd/glua once and pairs it with lua5.1, or skips where
// lua5.1 is missing.
func runner(t testing.TB) Runner {
	t.Helper()
	lua := luatest.Lua51(t)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "luafuzz-glua")
		if err != nil {
			buildErr = err
			return
		}
		gluaBin = filepath.Join(dir, "glua")
		build := exec.Command("go", "build", "-o", gluaBin, "github.com/gluaproject/glua/cmd/glua")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building glua: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return Runner{Lua51: lua, Glua: gluaBin, Timeout: 3 * time.Second}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if gluaBin != "" {
		os.RemoveAll(filepath.Dir(gluaBin))
	}
	os.Exit(code)
}

func knownClasses(t testing.TB) Known {
	t.Helper()
	k, err := ReadKnown(filepath.Join("testdata", "known.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestGluaPrintsWhatLua51PrintsForGeneratedPrograms is the CI run: a fixed
// range of seeds, every mismatch either of a known class or a failure that
// shows the shrunk program and both outputs.
func TestGluaPrintsWhatLua51PrintsForGeneratedPrograms(t *testing.T) {
	r := runner(t)
	known := knownClasses(t)
	ms, err := CheckAll(r, 1, ciPrograms, goruntime.NumCPU())
	if err != nil {
		t.Fatal(err)
	}
	tally := NewTally(ms)
	var unknown []Class
	for _, c := range tally.Classes() {
		if _, ok := known.Defect(c); ok {
			t.Logf("known %s: %d programs (seed %d)", c, tally.Count[c], tally.First[c].Program.Seed)
		} else {
			unknown = append(unknown, c)
		}
	}
	// Shrinking takes up to hundreds of runs; the first few new classes
	// are enough to start on.
	shrunk := shrinkAll(r, tally, unknown[:min(len(unknown), 2)], nil)
	for _, c := range unknown {
		m := shrunk[c]
		if m == nil {
			m = tally.First[c]
		}
		t.Errorf("%d programs differ in class %s, not in testdata/known.txt:\n%v", tally.Count[c], c, m)
	}
}

// TestLong is the long run, skipped unless -n is given: it reports how many
// programs fall in each class, known or not, with the smallest program of
// each.
func TestLong(t *testing.T) {
	if *longN == 0 {
		t.Skip("the long run needs -args -n N")
	}
	r := runner(t)
	known := knownClasses(t)
	start := time.Now()
	ms, err := CheckAll(r, *longFirst, *longN, goruntime.NumCPU())
	if err != nil {
		t.Fatal(err)
	}
	tally := NewTally(ms)
	var b strings.Builder
	fmt.Fprintf(&b, "%d programs (seeds %d to %d) in %s: %d differ\n", *longN, *longFirst, *longFirst+uint64(*longN)-1,
		time.Since(start).Round(time.Second), len(ms))
	for _, c := range tally.Classes() {
		defect, ok := known.Defect(c)
		if !ok {
			defect = "NEW"
		}
		fmt.Fprintf(&b, "%6d  %-24s %s\n", tally.Count[c], c, defect)
	}
	t.Log(b.String())
	report := func(m *Mismatch) {
		c := m.Classes[0]
		if _, ok := known.Defect(c); ok {
			t.Logf("%v", m)
		} else {
			t.Errorf("new class:\n%v", m)
		}
	}
	if !*longShrink {
		for _, c := range tally.Classes() {
			report(&Mismatch{Classes: []Class{c}, Program: tally.First[c].Program, Want: tally.First[c].Want, Got: tally.First[c].Got})
		}
		return
	}
	shrinkAll(r, tally, tally.Classes(), report)
}

// shrinkAll shrinks, a class a core, a fresh copy of the first program of
// each class, and gives each to done, when not nil, as it is shrunk.
func shrinkAll(r Runner, tally Tally, classes []Class, done func(*Mismatch)) map[Class]*Mismatch {
	work := make(chan Class)
	var (
		mu  sync.Mutex
		out = map[Class]*Mismatch{}
		wg  sync.WaitGroup
	)
	for range goruntime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				p := Generate(tally.First[c].Program.Seed)
				want, got := Shrink(r, p, c)
				m := &Mismatch{Classes: []Class{c}, Program: p, Want: want, Got: got}
				mu.Lock()
				out[c] = m
				if done != nil {
					done(m)
				}
				mu.Unlock()
			}
		}()
	}
	for _, c := range classes {
		work <- c
	}
	close(work)
	wg.Wait()
	return out
}
