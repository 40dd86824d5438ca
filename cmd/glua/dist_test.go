package main

import (
	"strings"
	"testing"
	"time"
)

// These run the dist module between real processes started by --nproc.

func TestDistSumScriptGivesOneProcessTotalWithTwoRanks(t *testing.T) {
	t.Parallel()
	for _, nproc := range []string{"2", "3"} {
		r := invocation{dir: ".", args: []string{"--nproc", nproc, "--allow-oversubscribe", "--backend", "cpu", "../../scripts/dist_sum.lua", "1001"}}.glua(t)
		if r.code != 0 {
			t.Fatalf("--nproc %s: %v", nproc, r)
		}
		if want := "[0] sum of 1..1001 over " + nproc + " ranks: 501501\n"; r.stdout != want {
			t.Errorf("--nproc %s: stdout %q, want %q", nproc, r.stdout, want)
		}
	}
}

func TestDistRankThatExitsEarlyFailsTheOthersWithinTheTimeout(t *testing.T) {
	t.Parallel()
	start := time.Now()
	r := invocation{dir: "testdata", args: []string{"--nproc", "2", "--allow-oversubscribe", "--backend", "cpu", "dist_early_exit.lua"},
		env: []string{"GLUA_DIST_TIMEOUT=3s"}}.glua(t)
	if r.code == 0 || !strings.Contains(r.stderr, "[0] glua: dist_early_exit.lua:4: dist.all_reduce: rank 1") {
		t.Errorf("rank 0 did not fail naming rank 1: %v", r)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}
