package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

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
	term := startTerminal(t, 100, 12, gluaCommand(nil, script)+"; sleep 30")
	during := term.waitFor(`batch \d+/20  \d+ B  [0-9.]+ GB/s  ETA \d+s`, 10*time.Second)
	if n := strings.Count(during, "batch "); n != 1 {
		t.Fatalf("%d progress lines on the screen, want one redrawn in place:\n%s", n, during)
	}
	after := term.waitFor(`loop done`, 15*time.Second)
	if strings.Contains(after, "GB/s") {
		t.Fatalf("the progress line is still on the screen after the loop:\n%s", after)
	}
}
