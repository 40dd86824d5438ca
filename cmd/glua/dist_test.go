package main

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
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

// dist_matmul.lua splits A's rows over the ranks, padding the last block
// when n is not a multiple of the rank count, and checks the gathered C on
// rank 0 against one device's product (the script asserts the tolerance).
func TestDistMatmulScriptGathersOneDeviceProductWithTwoAndThreeRanks(t *testing.T) {
	t.Parallel()
	for _, nproc := range []string{"2", "3"} {
		r := invocation{dir: ".", args: []string{"--nproc", nproc, "--allow-oversubscribe", "--backend", "cpu", "../../scripts/dist_matmul.lua", "31", "float64", "2"}}.glua(t)
		if r.code != 0 {
			t.Fatalf("--nproc %s: %v", nproc, r)
		}
		for _, want := range []string{
			"[0] C = A·B, 31x31 float64, " + nproc + " ranks of ",
			"[0] " + nproc + " ranks, gathered ",
			"[0] check: gathered C against one device's A·B, rel. error ",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("--nproc %s: no %q in stdout:\n%s", nproc, want, r.stdout)
			}
		}
	}
}

// scripts/bench/allreduce.lua times all_reduce from 8 bytes up to the
// largest size asked for, doubling; rank 0 alone prints one JSON line a
// size with nccl-tests' bandwidths, busbw = algbw · 2(n−1)/n.
func TestAllReduceBenchmarkPrintsOneJSONLineASizeFromRankZero(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		nproc int
		max   string
		sizes []int
	}{
		{2, "64", []int{8, 16, 32, 64}},
		{2, "1KiB", []int{8, 16, 32, 64, 128, 256, 512, 1024}},
		{3, "100", []int{8, 16, 32, 64}},
	} {
		r := invocation{dir: ".", args: []string{"--nproc", strconv.Itoa(tc.nproc), "--allow-oversubscribe", "--backend", "cpu", "../../scripts/bench/allreduce.lua", tc.max},
			env: []string{"GLUA_DIST_TIMEOUT=10s"}}.glua(t)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("--nproc %d, max %s: %v", tc.nproc, tc.max, r)
			continue
		}
		var sizes []int
		for _, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
			text, ok := strings.CutPrefix(line, "[0] ")
			if !ok {
				t.Errorf("--nproc %d: a line not from rank 0: %q", tc.nproc, line)
				continue
			}
			var m struct {
				Bench, Impl, DType, Backend string
				Ranks, Bytes                int
				Us                          float64
				AlgBW                       float64 `json:"algbw_gbs"`
				BusBW                       float64 `json:"busbw_gbs"`
			}
			if err := json.Unmarshal([]byte(text), &m); err != nil {
				t.Errorf("--nproc %d: %q is not a JSON object: %v", tc.nproc, text, err)
				continue
			}
			sizes = append(sizes, m.Bytes)
			n := float64(tc.nproc)
			switch {
			case m.Bench != "all_reduce" || m.Impl != "glua" || m.DType != "float32" || m.Backend != "cpu" || m.Ranks != tc.nproc:
				t.Errorf("--nproc %d: %q", tc.nproc, text)
			case !(m.Us > 0) || math.Abs(m.AlgBW-float64(m.Bytes)/m.Us/1e3) > 1e-3*m.AlgBW:
				t.Errorf("--nproc %d: algbw is not bytes/time: %q", tc.nproc, text)
			case math.Abs(m.BusBW-m.AlgBW*2*(n-1)/n) > 1e-3*m.BusBW:
				t.Errorf("--nproc %d: busbw is not algbw·2(n−1)/n: %q", tc.nproc, text)
			}
		}
		if !slices.Equal(sizes, tc.sizes) {
			t.Errorf("--nproc %d, max %s: sizes %v, want %v", tc.nproc, tc.max, sizes, tc.sizes)
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

// A rank whose script raises an error ends the job within seconds, not at
// the timeout, wherever the error comes: before the group forms, between
// two collectives, or while rank 0 waits inside one. The launcher names
// the rank and its message.
func TestARanksLuaErrorEndsTheJobWithinSecondsNamingIt(t *testing.T) {
	t.Parallel()
	for _, when := range []string{"before", "between", "inside"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			r, took := rankError(t, when, "cpu", []string{"--allow-oversubscribe"})
			checkRankError(t, r, took)
		})
	}
}

// rankError runs dist_rank_error.lua on two ranks of backend, with a
// timeout far longer than the job may take.
func rankError(t *testing.T, when, backend string, extra []string) (result, time.Duration) {
	t.Helper()
	args := append([]string{"--nproc", "2", "--backend", backend}, extra...)
	inv := invocation{dir: "testdata", args: append(args, "dist_rank_error.lua", when), env: []string{"GLUA_DIST_TIMEOUT=60s"}}
	start := time.Now()
	r := inv.run(t, gluaBin, "glua")
	return r, time.Since(start)
}

func checkRankError(t *testing.T, r result, took time.Duration) {
	t.Helper()
	// Rank 0 may see rank 1 go and report first: the launcher names the
	// rank that failed first all the same.
	want := "\nglua: rank 1 failed: dist_rank_error.lua:6: rank one fails; stopping the other ranks\n"
	if r.code != 1 || !strings.HasSuffix(r.stderr, want) || strings.Contains(r.stdout, "should not get here") {
		t.Errorf("want status 1 and stderr ending %q; got %v", want, r)
	}
	if took > 10*time.Second {
		t.Errorf("the job took %v to end after rank 1's error", took)
	}
}

// A send and a recv that cannot pair fail both ranks at once, naming both
// calls, rather than waiting for the timeout.
func TestSendAndRecvThatDoNotPairFailBothRanksAtOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range pairMismatches {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			checkPairMismatch(t, tc.mode, tc.msg, "cpu", []string{"--allow-oversubscribe"})
		})
	}
}

var pairMismatches = []struct{ mode, msg string }{
	{"both_send", "rank 1 called send to rank 0, rank 0 called send to rank 1"},
	{"sizes", "rank 1 receives 20 bytes, rank 0 sends 16"},
	{"sizes_late", "rank 1 receives 20 bytes, rank 0 sends 16"},
}

func checkPairMismatch(t *testing.T, mode, msg, backend string, extra []string) {
	t.Helper()
	args := append([]string{"--nproc", "2", "--backend", backend}, extra...)
	start := time.Now()
	r := invocation{dir: "testdata", args: append(args, "dist_pair_mismatch.lua", mode), env: []string{"GLUA_DIST_TIMEOUT=60s"}}.run(t, gluaBin, "glua")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("%s: the ranks took %v to fail", mode, d)
	}
	for rank := range 2 {
		line := regexp.MustCompile(fmt.Sprintf(`(?m)^\[%d\] error: dist_pair_mismatch\.lua:\d+: dist\.(send|recv|barrier): .*%s(; the communicator was aborted)?$`, rank, regexp.QuoteMeta(msg)))
		if !line.MatchString(r.stdout) {
			t.Errorf("%s: rank %d did not report %q: %v", mode, rank, msg, r)
		}
	}
}

// A rank that stops answering (a stopped process, a lost node: nothing
// the launcher sees) fails the one waiting for it at the timeout, and
// the error names the rank it waited for.
func TestARankThatStopsAnsweringIsNamedAtTheTimeout(t *testing.T) {
	t.Parallel()
	checkStoppedRank(t, "cpu", []string{"--allow-oversubscribe"})
}

func checkStoppedRank(t *testing.T, backend string, extra []string) {
	t.Helper()
	args := append([]string{"--nproc", "2", "--backend", backend}, extra...)
	start := time.Now()
	r := invocation{dir: "testdata", args: append(args, "dist_stopped_rank.lua", "30"), env: []string{"GLUA_DIST_TIMEOUT=3s"}}.run(t, gluaBin, "glua")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the job took %v with a 3s timeout", d)
	}
	waited := regexp.MustCompile(`(?m)^\[0\] glua: dist_stopped_rank\.lua:\d+: dist\.(all_reduce|barrier): .*rank 1\b.*within the timeout \(3s\)`)
	if r.code != 1 || !waited.MatchString(r.stderr) {
		t.Errorf("rank 0 did not fail naming rank 1 at the timeout: %v", r)
	}
}

// batch.iter and batch.chunks with shard = true deal a job's batches out
// among its ranks: with three ranks every batch, streamed or listed, and
// every chunk reaches exactly one rank, numbered among all of them; alone,
// a process gets them all.
func TestShardedBatchesReachEachRankOnce(t *testing.T) {
	t.Parallel()
	alone := invocation{dir: "testdata", args: []string{"--backend", "cpu", "shard.lua"}}.glua(t)
	want := "list 1=11 2=22 3=33 4=44 5=55 6=66 7=77\nstream 1=11 2=22 3=33 4=44 5=55 6=66 7=77\nchunks 1,2,3 4,5,6 7,8,9 10\nranks 1\n"
	if alone.code != 0 || alone.stdout != want {
		t.Fatalf("one process: %v\nwant stdout %q", alone, want)
	}
	r := invocation{dir: "testdata", args: []string{"--nproc", "3", "--allow-oversubscribe", "--backend", "cpu", "shard.lua"}}.glua(t)
	if r.code != 0 {
		t.Fatalf("--nproc 3: %v", r)
	}
	for _, line := range []string{
		"[0] list 1=11 4=44 7=77", "[1] list 2=22 5=55", "[2] list 3=33 6=66",
		"[0] stream 1=11 4=44 7=77", "[1] stream 2=22 5=55", "[2] stream 3=33 6=66",
		"[0] chunks 1,2,3 10", "[1] chunks 4,5,6", "[2] chunks 7,8,9",
	} {
		if !strings.Contains(r.stdout, line+"\n") {
			t.Errorf("--nproc 3: no line %q in\n%s", line, r.stdout)
		}
	}
}

// sortedLines is out's lines in sorted order: the ranks' lines interleave
// as they run, so a test compares them as a set.
func sortedLines(out string) []string {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	slices.Sort(lines)
	return lines
}

// dist_conformance.lua runs every collective for every dtype and op between
// the processes and checks each result against plain Lua; the ranks all
// make the same number of checks, counted here so that a script that
// skipped a case would not pass.
func TestEveryCollectiveForEveryDTypeAndOpMatchesPlainLuaBetweenProcesses(t *testing.T) {
	t.Parallel()
	for _, size := range []int{2, 3} {
		start := time.Now()
		r := invocation{dir: "testdata", args: []string{"--nproc", strconv.Itoa(size), "--allow-oversubscribe", "--backend", "cpu", "dist_conformance.lua"},
			env: []string{"GLUA_DIST_TIMEOUT=5s"}}.glua(t)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("--nproc %d: %v", size, r)
			continue
		}
		// Per dtype: per op, all_reduce, reduce from every root and
		// reduce_scatter; broadcast from every root, all_gather, and a
		// recv from each of the size-1 other ranks. Then one barrier.
		checks := 7*(5*(1+size+1)+size+1+size-1) + 1
		var want []string
		for rank := range size {
			want = append(want, fmt.Sprintf("[%d] rank %d: %d checks passed", rank, rank, checks))
		}
		if got := sortedLines(r.stdout); !slices.Equal(got, want) {
			t.Errorf("--nproc %d: stdout lines\n%q\nwant\n%q", size, got, want)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("--nproc %d took %v", size, d)
		}
	}
}

// Ranks whose all_reduce disagrees in shape or dtype each get an error
// naming the ranks that disagree, at once and not after the timeout, and
// every later call fails instead of waiting, saying what stopped the ranks.
func TestMismatchedShapesOrDTypesAcrossProcessesFailOnEveryRank(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mismatch, msg string }{
		{"shapes", "rank 1 has 5 float32 elements, rank 0 has 4"},
		{"dtypes", "rank 1 has 4 float64 elements, rank 0 has 4 float32 elements"},
	} {
		for _, size := range []int{2, 3} {
			start := time.Now()
			// The timeout is longer than the test allows: the ranks
			// must fail because they disagree, not because they waited.
			r := invocation{dir: "testdata", args: []string{"--nproc", strconv.Itoa(size), "--allow-oversubscribe", "--backend", "cpu", "dist_mismatch.lua", tc.mismatch},
				env: []string{"GLUA_DIST_TIMEOUT=30s"}}.glua(t)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%s, --nproc %d: the ranks took %v to fail", tc.mismatch, size, d)
			}
			if r.code != 0 || r.stderr != "" {
				t.Errorf("%s, --nproc %d: %v", tc.mismatch, size, r)
				continue
			}
			var want []string
			for rank := range size {
				want = append(want,
					fmt.Sprintf("[%d] error: dist_mismatch.lua:17: dist.all_reduce: %s", rank, tc.msg),
					fmt.Sprintf("[%d] then: dist_mismatch.lua:19: dist.barrier: the ranks stopped at an earlier all_reduce: %s", rank, tc.msg))
			}
			slices.Sort(want)
			if got := sortedLines(r.stdout); !slices.Equal(got, want) {
				t.Errorf("%s, --nproc %d: stdout lines\n%q\nwant\n%q", tc.mismatch, size, got, want)
			}
		}
	}
}
