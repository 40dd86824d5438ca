package luafuzz

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gluaproject/glua/internal/luatest"
)

func TestTheSameSeedWritesTheSameProgram(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		if a, b := Generate(seed).Source(), Generate(seed).Source(); a != b {
			t.Fatalf("seed %d wrote two programs", seed)
		}
	}
	if Generate(1).Source() == Generate(2).Source() {
		t.Error("seeds 1 and 2 wrote the same program")
	}
}

// TestEveryFeatureIsGenerated: a few hundred seeds, as the CI run checks,
// meet every kind of section.
func TestEveryFeatureIsGenerated(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(1); seed <= ciPrograms; seed++ {
		for _, s := range Generate(seed).sections {
			seen[s] = true
		}
	}
	for _, f := range features {
		if !seen[f.name] {
			t.Errorf("no program of the first %d has a %s section", ciPrograms, f.name)
		}
	}
	if !seen["uncaught"] {
		t.Error("no program ends with an uncaught error")
	}
}

// TestGeneratedProgramsAreDeterministicLua51: lua5.1 runs each program to
// its end (or its planned uncaught error) and prints the same twice, so a
// difference from glua is glua's.
func TestGeneratedProgramsAreDeterministicLua51(t *testing.T) {
	lua := luatest.Lua51(t)
	r := Runner{Lua51: lua, Glua: lua}
	for seed := uint64(1); seed <= 100; seed++ {
		p := Generate(seed)
		first, second, err := r.Run(p.Source())
		if err != nil {
			t.Fatal(err)
		}
		if first != second {
			t.Errorf("seed %d prints differently in two runs:\n%v\n%v", seed, first, second)
		}
		wantCode := 0
		if p.sections[len(p.sections)-1] == "uncaught" {
			wantCode = 1
		}
		if first.Code != wantCode || first.TimedOut {
			t.Errorf("seed %d: lua5.1 exits %d (timed out: %v), want %d: %s", seed, first.Code, first.TimedOut, wantCode, first.Message)
		}
		if strings.Contains(first.Stdout, "0x") && strings.Contains(first.Stdout, "table: ") {
			t.Errorf("seed %d prints a table's address", seed)
		}
	}
}

func TestMkKeepsNodesAsChildrenAndEscapesPercent(t *testing.T) {
	e := lit("x")
	n := mk(stmt, "print(%s, \"%%d\", %s)", e, "y")
	if got := n.String(); got != `print(x, "%d", y)` {
		t.Errorf("got %q", got)
	}
	if subs := n.subexprs(); len(subs) != 1 || subs[0] != e {
		t.Errorf("subexprs %v, want the one node", subs)
	}
	e.sub = lit("z")
	if got := n.String(); got != `print(z, "%d", y)` {
		t.Errorf("after a replacement got %q", got)
	}
	n.cut = true
	if got := n.String(); got != "" {
		t.Errorf("a cut statement writes %q", got)
	}
}

func TestShrinkLeavesTheStatementThatDiffers(t *testing.T) {
	lua := luatest.Lua51(t)
	if _, err := exec.LookPath("sed"); err != nil {
		t.Skip("no sed for the stand-in glua")
	}
	// A stand-in for glua that prints nan where lua5.1 prints -nan.
	fake := t.TempDir() + "/fakeglua"
	writeExecutable(t, fake, "#!/bin/sh\n"+lua+" \"$@\" | sed 's/-nan/nan/g'\n")
	r := Runner{Lua51: lua, Glua: fake}
	p := &Program{sections: []string{"arith"}}
	p.root = block([]*node{
		{kind: text, parts: []any{prelude}},
		{kind: text, parts: []any{`print("#1")`}},
		mk(stmt, "local a = %s", lit("1")),
		mk(stmt, "print(a + %s)", mk(expr, "(%s * %s)", lit("2"), lit("3"))),
		mk(stmt, "print(%s)", mk(expr, "id(%s)", mk(expr, "(%s %% %s)", lit("5"), lit("0")))),
		mk(stmt, "print(%s)", lit(`"after"`)),
	})
	want, got, err := r.Run(p.Source())
	if err != nil {
		t.Fatal(err)
	}
	c := Classify(p, want, got)
	if !slices.Equal(c, []Class{"arith/nan"}) {
		t.Fatalf("classes %q, want arith/nan:\n%v%v", c, want, got)
	}
	want, got = Shrink(r, p, c[0])
	src := p.Source()
	body := strings.Fields(src[strings.Index(src, `print("#1")`):])
	if wantBody := []string{`print("#1")`, "print((5", "%", "0))"}; strings.Join(body, " ") != strings.Join(wantBody, " ") {
		t.Errorf("shrunk to\n%s\nwant\n%s", body, wantBody)
	}
	if want.Stdout != "#1\n-nan\n" || got.Stdout != "#1\nnan\n" {
		t.Errorf("outcomes of the shrunk program:\n%v%v", want, got)
	}
}
