package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/cuda"
)

// These run the dist failure cases of dist_test.go on two GPUs through
// NCCL. They skip without two CUDA devices, unless GLUA_REQUIRE_NCCL=1,
// which makes them fail instead, so that a GPU run cannot pass by
// skipping. Each is timed: the job must end within 10 s of the failure.

func twoGPUs(t *testing.T) {
	t.Helper()
	for dev := range 2 {
		b, err := cuda.Load(cuda.Config{Device: dev})
		if err != nil {
			if os.Getenv("GLUA_REQUIRE_NCCL") == "1" {
				t.Fatalf("GLUA_REQUIRE_NCCL=1 but there is no CUDA device %d: %v", dev, err)
			}
			t.Skipf("needs two CUDA devices: %v", err)
		}
		b.Close()
	}
}

func TestNCCLRanksLuaErrorEndsTheJobWithinSecondsNamingIt(t *testing.T) {
	twoGPUs(t)
	for _, when := range []string{"before", "between", "inside"} {
		t.Run(when, func(t *testing.T) {
			r, took := rankError(t, when, "cuda", nil)
			t.Logf("%s: the job ended %v after it started", when, took)
			checkRankError(t, r, took)
		})
	}
}

// Every collective for every dtype and op, one rank on each GPU of the
// host (two, four or eight), under each pool strategy: the path a job on
// the whole machine takes.
func TestNCCLEveryCollectiveOnEveryGPUUnderEveryPoolStrategy(t *testing.T) {
	twoGPUs(t)
	b, err := cuda.Load(cuda.Config{})
	if err != nil {
		t.Fatal(err)
	}
	size := b.DeviceCount()
	b.Close()
	checks := 7*(5*(1+size+1)+size+1+size-1) + 1
	var want []string
	for rank := range size {
		want = append(want, fmt.Sprintf("[%d] rank %d: %d checks passed", rank, rank, checks))
	}
	for _, strategy := range []string{"caching", "none", "cuda"} {
		start := time.Now()
		r := invocation{dir: "testdata", args: []string{"--nproc", strconv.Itoa(size), "--backend", "cuda", "dist_conformance.lua"},
			env: []string{"GLUA_MEMORY_POOL=" + strategy}}.glua(t)
		t.Logf("%d GPUs, pool %s: %v", size, strategy, time.Since(start))
		if r.code != 0 {
			t.Errorf("%d GPUs, pool %s: %v", size, strategy, r)
			continue
		}
		if got := sortedLines(r.stdout); !slices.Equal(got, want) {
			t.Errorf("%d GPUs, pool %s: stdout lines\n%q\nwant\n%q", size, strategy, got, want)
		}
	}
}

func TestNCCLSendAndRecvThatDoNotPairFailBothRanksAtOnce(t *testing.T) {
	twoGPUs(t)
	for _, tc := range pairMismatches {
		t.Run(tc.mode, func(t *testing.T) {
			checkPairMismatch(t, tc.mode, tc.msg, "cuda", nil)
		})
	}
}

func TestNCCLRankThatStopsAnsweringIsNamedAtTheTimeout(t *testing.T) {
	twoGPUs(t)
	checkStoppedRank(t, "cuda", nil)
}

func TestNCCLDistTrainOnTwoGPUsMatchesOneGPU(t *testing.T) {
	twoGPUs(t)
	checkDistTrain(t, "cuda", nil)
}

// Two nodes simulated on one host, the path a cluster's ranks take: a
// launcher a GPU (CUDA_VISIBLE_DEVICES split between them) and NCCL kept
// to its network transport. Every collective for every dtype and op must
// pass, and NCCL's log must show the ranks connected over the network.
// NCCL's log goes to files of its own (NCCL_DEBUG_FILE): written from its
// own threads to the ranks' stdout, it splits the ranks' lines.
func twoNodeEnv(logs string) [2][]string {
	var env [2][]string
	for node := range env {
		env[node] = []string{fmt.Sprintf("CUDA_VISIBLE_DEVICES=%d", node), "NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1",
			"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,NET", "NCCL_DEBUG_FILE=" + filepath.Join(logs, fmt.Sprintf("nccl-node%d.%%p.log", node))}
	}
	return env
}

// ncclLog is what NCCL logged on node's ranks.
func ncclLog(t *testing.T, logs string, node int) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(logs, fmt.Sprintf("nccl-node%d.*.log", node)))
	if err != nil || len(files) == 0 {
		t.Fatalf("node %d: NCCL wrote no log in %s (%v)", node, logs, err)
	}
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	return all.String()
}

func TestNCCLTwoNodesOnOneHostPassEveryCollectiveOverTheNetwork(t *testing.T) {
	twoGPUs(t)
	port := freePortPair(t)
	args := []string{"--nproc-per-node", "1", "--backend", "cuda", "dist_conformance.lua"}
	logs := t.TempDir()
	env := twoNodeEnv(logs)
	start := time.Now()
	one := startNode(t, "testdata", 1, port, env[1], args...)
	zero := startNode(t, "testdata", 0, port, env[0], args...)
	results := []result{zero.wait(), one.wait()}
	t.Logf("two nodes took %v", time.Since(start))
	const size = 2
	checks := 7*(5*(1+size+1)+size+1+size-1) + 1
	for rank, r := range results {
		if r.code != 0 {
			t.Fatalf("node %d: %v", rank, r)
		}
		var mine []string
		for _, line := range strings.Split(r.stdout, "\n") {
			if line != "" {
				mine = append(mine, line)
			}
		}
		if want := fmt.Sprintf("[%d] rank %d: %d checks passed", rank, rank, checks); !slices.Equal(mine, []string{want}) {
			t.Errorf("node %d printed %q, want %q", rank, mine, want)
		}
		if out := ncclLog(t, logs, rank); !strings.Contains(out, "via NET/") || strings.Contains(out, "via P2P") || strings.Contains(out, "via SHM") {
			t.Errorf("node %d: NCCL did not connect the ranks over its network transport alone:\n%s", rank, out)
		}
	}
}

func TestNCCLANodeWhoseLauncherDiesEndsTheOtherNodesRanks(t *testing.T) {
	twoGPUs(t)
	checkNodeLauncherDeath(t, 1, twoNodeEnv(t.TempDir()), "--backend", "cuda")
}

// Ranks on GPUs end with their launcher, whatever ends it: a rank left
// running would keep its card.
func TestNCCLRanksEndWhenTheirLauncherIsKilledOrHungUp(t *testing.T) {
	twoGPUs(t)
	checkRanksEndWithLauncher(t, "cuda", 2)
	checkSignalsStopEveryRank(t, "cuda", 2, false)
}
