package luafuzz

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func writeExecutable(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestClassNamesTheSectionAndTheDifference(t *testing.T) {
	p := &Program{sections: []string{"calls", "arith.mod", "errors"}}
	p.root = block([]*node{
		{kind: text, parts: []any{"local x = 1"}},
		{kind: text, parts: []any{`print("#1")`}},
		{kind: text, parts: []any{`print("#2")`}},
		{kind: text, parts: []any{`print(1)`}},
		{kind: text, parts: []any{`print("#3")`}},
		{kind: text, parts: []any{`print(2)`}},
	})
	out := func(stdout, message string, code int) Outcome {
		return Outcome{Stdout: stdout, Message: message, Code: code}
	}
	tests := []struct {
		name      string
		want, got Outcome
		class     Class
	}{
		{"same", out("#1\n", "", 0), out("#1\n", "", 0), ""},
		{"value", out("#1\n#2\nfalse\n", "", 0), out("#1\n#2\nold\n", "", 0), "arith.mod/value"},
		{"nan", out("#1\n#2\n-nan\t1\n", "", 0), out("#1\n#2\nnan\t1\n", "", 0), "arith.mod/nan"},
		{"zero", out("#1\n#2\n0\n", "", 0), out("#1\n#2\n-0\n", "", 0), "arith.mod/zero"},
		{"wording", out("#1\n#2\n#3\nfalse\tfuzz.lua:6: attempt to call global 'f' (a nil value)\n", "", 0),
			out("#1\n#2\n#3\nfalse\tfuzz.lua:6: attempt to call a non-function object\n", "", 0), "errors/wording"},
		{"badarg", out("#1\n2:false,bad argument #1 to '?' (number expected, got no value)\n", "", 0),
			out("#1\n2:false,fuzz.lua:3: bad argument #1 to (anonymous) (number expected, got no value)\n", "", 0), "calls/badarg"},
		{"crash", out("#1\n#2\n1\n", "", 0), out("#1\n#2\n", "fuzz.lua:4: runtime error: invalid memory address or nil pointer dereference", 1), "arith.mod/crash"},
		{"hang", out("#1\n#2\n1\n", "", 0), Outcome{Stdout: "#1\n#2\n", Code: -1, TimedOut: true}, "arith.mod/hang"},
		{"lua5.1 hangs", Outcome{Stdout: "", Code: -1, TimedOut: true}, out("#1\n#2\n1\n", "", 0), "lua5.1/hang"},
		{"lua5.1 dies of a signal", Outcome{Stdout: "", Code: -1}, out("#1\n#2\n1\n", "fuzz.lua:9: attempt to perform arithmetic on a table value", 1), "lua5.1/crash"},
		{"lua5.1 dies of a signal, glua panics", Outcome{Stdout: "#1\n#2\n1\n", Code: -1}, out("#1\n#2\n", "fuzz.lua:4: runtime error: index out of range", 1), "arith.mod/crash"},
		{"hang at the end", out("#1\n#2\n1\n#3\n2\n", "", 0), Outcome{Stdout: "#1\n#2\n1\n#3\n2\n", Code: -1, TimedOut: true}, "errors/hang"},
		{"error message", out("#1\n#2\n1\n#3\n", "fuzz.lua:6: attempt to index local 't' (a nil value)", 1),
			out("#1\n#2\n1\n#3\n", "fuzz.lua:6: attempt to index a non-table object(nil) with key 'x'", 1), "errors/wording"},
		{"number", out("#1\n#2\nx\t0\t9.007199254741e+15\n", "", 0), out("#1\n#2\nx\t5e-301\t9007199254740992\n", "", 0), "arith.mod/number"},
		{"numbers in text", out("#1\n#2\n{n=0}\ta-9.2233720368548e+18\n", "", 0), out("#1\n#2\n{n=7.1e+14}\ta-9223372036854775808\n", "", 0), "arith.mod/number"},
		{"not only numbers", out("#1\n#2\nx\t0\n", "", 0), out("#1\n#2\nold\t0\n", "", 0), "arith.mod/value"},
		{"a loop back into an earlier section", out("#1\n1\n#2\n#3\n2\n", "", 0), Outcome{Stdout: "#1\n1\n#2\n#2\n#2\n", Code: -1, TimedOut: true}, "errors/hang"},
		{"nul", out("#1\n#2\na\n", "", 0), out("#1\n#2\na\x00z\n", "", 0), "arith.mod/nul"},
		{"nul in one value of several", out("#1\n#2\n1\t\t2-3\n", "", 0), out("#1\n#2\n1\x00za\t\t2-3\n", "", 0), "arith.mod/nul"},
		{"where", out("#1\n2:false,invalid replacement value (a boolean)\n", "", 0), out("#1\n2:false,fuzz.lua:2: invalid replacement value (a boolean)\n", "", 0), "calls/where"},
		{"exit status", out("#1\n", "", 0), out("#1\n", "", 1), "calls/exit"},
		{"a section prints less", out("#1\n1\n2\n#2\n", "", 0), out("#1\n1\n#2\n", "", 0), "calls/value"},
		{"a crash in the first section", out("#1\n#2\n1\n", "", 0), out("#1\n", "fuzz.lua:2: runtime error: index out of range", 1), "calls/crash"},
		{"does not compile", out("#1\n#2\n1\n", "", 0), out("", "fuzz.lua:4: register overflow", 1), "arith.mod/value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var want []Class
			if tc.class != "" {
				want = []Class{tc.class}
			}
			if c := Classify(p, tc.want, tc.got); !slices.Equal(c, want) {
				t.Errorf("classes %q, want %q", c, want)
			}
		})
	}
}

func TestEachSectionThatDiffersHasAClass(t *testing.T) {
	p := &Program{sections: []string{"calls", "arith.mod", "errors"}}
	p.root = block(nil)
	want := Outcome{Stdout: "#1\na\n#2\n-nan\n#3\n2\n", Message: "fuzz.lua:9: boom", Code: 1}
	got := Outcome{Stdout: "#1\nb\n#2\nnan\n#3\n2\n", Message: "fuzz.lua:9: other", Code: 1}
	if c, w := Classify(p, want, got), []Class{"calls/value", "arith.mod/nan", "errors/wording"}; !slices.Equal(c, w) {
		t.Errorf("classes %q, want %q", c, w)
	}
}

func TestKnownListNeedsAClassAndADefect(t *testing.T) {
	k, err := parseKnown(strings.NewReader("# comment\n\narith.mod/nan  NaN prints as nan (issue 30 item 10)\n"), "known.txt")
	if err != nil || k["arith.mod/nan"] != "NaN prints as nan (issue 30 item 10)" || len(k) != 1 {
		t.Errorf("got %v, %v", k, err)
	}
	if d, ok := k.Defect("arith.mod/nan"); !ok || d == "" {
		t.Error("a listed class is not known")
	}
	if _, ok := k.Defect("arith.pow/nan"); ok {
		t.Error("a class not listed is known")
	}
	k["*/wording"] = "Lua 5.1's error wording"
	if d, ok := k.Defect("calls/wording"); !ok || d != "Lua 5.1's error wording" {
		t.Errorf("*/wording does not cover calls/wording: %q %v", d, ok)
	}
	for _, bad := range []string{"arith.mod/nan\n", "nan  a reason\n"} {
		if _, err := parseKnown(strings.NewReader(bad), "known.txt"); err == nil || !strings.Contains(err.Error(), "known.txt:1:") {
			t.Errorf("%q: error %v, want one naming the line", bad, err)
		}
	}
}

// TestKnownListParses: the list the CI test reads is well formed.
func TestKnownListParses(t *testing.T) {
	if _, err := ReadKnown("testdata/known.txt"); err != nil {
		t.Fatal(err)
	}
}
