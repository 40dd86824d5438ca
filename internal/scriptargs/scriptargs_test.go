package scriptargs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func write(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "small_args.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Each script's arguments are read from its line; comments, blank lines
// and scripts with no arguments are kept apart.
func TestEachScriptGetsTheArgumentsOnItsLine(t *testing.T) {
	args, err := Read(write(t, "# a comment\nmatmul.lua 96 4\n\nplain.lua all 20\nbare.lua\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(args["matmul.lua"], []string{"96", "4"}) || !slices.Equal(args["plain.lua"], []string{"all", "20"}) {
		t.Fatalf("got %v", args)
	}
	if a, ok := args["bare.lua"]; !ok || len(a) != 0 {
		t.Fatalf("bare.lua: got %v, listed %v; want listed with no arguments", a, ok)
	}
	if len(args) != 3 {
		t.Fatalf("got %d scripts, want 3: %v", len(args), args)
	}
}

// A script listed twice is an error naming the line, not a silent choice.
func TestAScriptListedTwiceIsAnError(t *testing.T) {
	_, err := Read(write(t, "fused.lua 1000 3\nfused.lua 10 1\n"))
	if err == nil || !strings.Contains(err.Error(), ":2: fused.lua is listed twice") {
		t.Fatalf("got %v, want an error naming line 2", err)
	}
}

// The committed file reads, and lists the scripts the tests shrink.
func TestTheCommittedFileReads(t *testing.T) {
	args, err := Read(filepath.Join("..", "..", "scripts", "testdata", "small_args.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(args["fused.lua"]) == 0 || len(args["out_of_core.lua"]) == 0 {
		t.Fatalf("fused.lua or out_of_core.lua has no small size: %v", args)
	}
}
