package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gluaproject/glua/config"
)

// These are glua --nproc, the launcher of several ranks on one host, and
// the rank environment --info shows.

// copyTestdata copies testdata files into a fresh directory, where ranks
// may leave files.
func copyTestdata(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestNprocPrefixesEveryWholeLineWithItsRank(t *testing.T) {
	t.Parallel()
	r := invocation{dir: "testdata", args: []string{"--nproc", "3", "--allow-oversubscribe", "rank.lua", "a", "--nproc"}}.glua(t)
	if r.code != 0 {
		t.Fatalf("glua --nproc 3 failed:\n%v", r)
	}
	comm := regexp.MustCompile(`at (127\.0\.0\.1:\d+) `).FindStringSubmatch(r.stdout)
	if comm == nil {
		t.Fatalf("no rank shows NCCL_COMM_ID on 127.0.0.1:\n%v", r)
	}
	var wantOut, wantErr []string
	for rank := range 3 {
		// The CPU backend has one device, which the ranks share.
		wantOut = append(wantOut,
			fmt.Sprintf("[%d] rank %d of 3 local %d device 0 at %s args a,--nproc", rank, rank, rank, comm[1]),
			fmt.Sprintf("[%d] written in pieces", rank),
			fmt.Sprintf("[%d] no newline at the end", rank))
		wantErr = append(wantErr, fmt.Sprintf("[%d] rank %d on stderr", rank, rank))
	}
	for _, c := range []struct {
		name, got string
		want      []string
	}{{"stdout", r.stdout, wantOut}, {"stderr", r.stderr, wantErr}} {
		if !strings.HasSuffix(c.got, "\n") {
			t.Errorf("%s does not end with a whole line: %q", c.name, c.got)
		}
		got := strings.Split(strings.TrimSuffix(c.got, "\n"), "\n")
		// The ranks run at once: their lines interleave, but each rank's
		// keep their order.
		for rank := range 3 {
			var mine []string
			for _, line := range got {
				if strings.HasPrefix(line, fmt.Sprintf("[%d] ", rank)) {
					mine = append(mine, line)
				}
			}
			var want []string
			for _, line := range c.want {
				if strings.HasPrefix(line, fmt.Sprintf("[%d] ", rank)) {
					want = append(want, line)
				}
			}
			if !slices.Equal(mine, want) {
				t.Errorf("rank %d's %s lines are\n%q\nwant\n%q", rank, c.name, mine, want)
			}
		}
		if len(got) != len(c.want) {
			t.Errorf("%s has %d lines, want %d:\n%s", c.name, len(got), len(c.want), c.got)
		}
	}
}

func TestNprocOneRunsTheScriptInThisProcess(t *testing.T) {
	t.Parallel()
	r := invocation{dir: "testdata", args: []string{"--nproc", "1", "rank.lua"}}.glua(t)
	expect(t, r, 0, "^rank nil of nil local nil device nil at nil args \nwritten in pieces\nno newline at the end$", "^rank nil on stderr\n$")
}

func TestOnTheCPUNprocNeedsAllowOversubscribe(t *testing.T) {
	t.Parallel()
	r := invocation{dir: "testdata", args: []string{"--nproc", "2", "rank.lua"}}.glua(t)
	expect(t, r, 1, "", `^glua: --nproc 2: the cpu backend has 1 device, which 2 ranks would share; add --allow-oversubscribe to run them so\n$`)
}

func TestBadNprocIsAnErrorBeforeAnythingRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nproc", "0"}, `--nproc: 0: there must be at least one process`},
		{[]string{"--nproc=-2"}, `--nproc: -2: there must be at least one process`},
		{[]string{"--nproc", "two"}, `--nproc: "two" is not a whole number of processes`},
		{[]string{"--nproc", ""}, `--nproc: "" is not a whole number of processes`},
		{[]string{"--nproc", "2.5"}, `--nproc: "2.5" is not a whole number of processes`},
		{[]string{"--nproc", "2", "--allow-oversubscribe", "-i"}, `--nproc 2: -i would start 2 prompts on one terminal; run a script`},
		{[]string{"--nproc", "2", "--allow-oversubscribe", "-E"}, `--nproc 2: -E would make each rank ignore GLUA_DEVICE, which gives it its device`},
		{[]string{"--nproc", "2", "--allow-oversubscribe", "--device", "0"}, `--nproc 2: --device cannot be given too: rank r uses device r`},
		{[]string{"--nproc", "2", "--allow-oversubscribe", "--memory-profile", "m.html"}, `--nproc 2: --memory-profile would have every rank write one file`},
	} {
		args := append(tc.args, "-e", "print('ran')")
		r := invocation{dir: t.TempDir(), args: args}.glua(t)
		expect(t, r, 1, "", "^glua: "+regexp.QuoteMeta(tc.want)+"\n$")
	}
	for _, args := range [][]string{{"--nproc", "2", "--allow-oversubscribe"}, {"--nproc", "2", "--allow-oversubscribe", "-"}} {
		r := invocation{dir: t.TempDir(), args: args, stdin: "print('ran')"}.glua(t)
		expect(t, r, 1, "", `^glua: --nproc 2: the ranks need a script or -e; stdin cannot be shared by 2 ranks\n$`)
	}
}

// More ranks than GPUs is refused before anything starts, naming the
// count (and CUDA_VISIBLE_DEVICES where it set the count), even with
// --allow-oversubscribe, which is for the CPU backend only: two ranks
// cannot share a GPU under NCCL.
func TestNprocPastTheGPUCountIsAnErrorNamingIt(t *testing.T) {
	t.Parallel()
	unset := func(string) (string, bool) { return "", false }
	visible := func(string) (string, bool) { return "3,5", true }
	for _, tc := range []struct {
		backend       string
		count, n      int
		oversubscribe bool
		visible       string
		lookup        func(string) (string, bool)
		want          string // "" when the plan is made
	}{
		{"cuda", 1, 2, false, "", unset, "--nproc 2: the cuda backend has 1 device; one rank a device"},
		{"cuda", 2, 4, true, "", unset, "--nproc 4: the cuda backend has 2 devices; one rank a device (--allow-oversubscribe is for the CPU backend only)"},
		{"cuda", 2, 3, false, "3,5", visible, "--nproc 3: the cuda backend has 2 devices (CUDA_VISIBLE_DEVICES=3,5); one rank a device"},
		{"cpu", 1, 2, false, "", unset, "--nproc 2: the cpu backend has 1 device, which 2 ranks would share; add --allow-oversubscribe to run them so"},
		{"cuda", 2, 2, false, "", unset, ""},
		{"cuda", 2, 2, false, "3,5", visible, ""},
		{"cpu", 1, 3, true, "", unset, ""},
	} {
		plan, err := planRanks(tc.backend, tc.count, tc.n, tc.oversubscribe, tc.visible, tc.lookup, jobPlace{world: tc.n})
		if tc.want != "" {
			if err == nil || err.Error() != tc.want {
				t.Errorf("%s with %d, --nproc %d: %v, want %s", tc.backend, tc.count, tc.n, err, tc.want)
			}
			continue
		}
		if err != nil || len(plan) != tc.n {
			t.Errorf("%s with %d, --nproc %d: %d ranks, %v", tc.backend, tc.count, tc.n, len(plan), err)
			continue
		}
		for r, env := range plan {
			want := "GLUA_DEVICE=" + strconv.Itoa(r%tc.count)
			if tc.visible != "" {
				want = "CUDA_VISIBLE_DEVICES=" + strings.Split(tc.visible, ",")[r]
			}
			if !slices.Contains(env, want) || !slices.Contains(env, "GLUA_RANK="+strconv.Itoa(r)) {
				t.Errorf("%s with %d, --nproc %d: rank %d's variables %q lack %s", tc.backend, tc.count, tc.n, r, env, want)
			}
		}
	}
}

// A rank that torchrun, srun or mpirun started uses device local_rank, as
// glua --nproc's rank r uses device r, unless the device was chosen or the
// backend has one device (the CPU's, or the one GPU the launcher left it).
func TestALaunchersRankUsesTheDeviceOfItsLocalRank(t *testing.T) {
	t.Parallel()
	torchrun := map[string]string{"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"}
	slurm := map[string]string{"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "3"}
	glua := map[string]string{"GLUA_RANK": "1", "GLUA_WORLD_SIZE": "2", "GLUA_LOCAL_RANK": "1"}
	with := func(env map[string]string, k, v string) map[string]string {
		m := map[string]string{k: v}
		for k, v := range env {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		devices int
		device  string // cuda.device after, "" when an error is wanted
		origin  string
		err     string
	}{
		{"torchrun, 4 GPUs", torchrun, 4, "1", "local rank (torchrun)", ""},
		{"slurm, 4 GPUs", slurm, 4, "3", "local rank (slurm)", ""},
		{"one GPU visible", slurm, 1, "0", "default", ""},
		{"the CPU backend", torchrun, 1, "0", "default", ""},
		{"no launcher", map[string]string{}, 4, "0", "default", ""},
		{"glua --nproc", glua, 4, "0", "default", ""},
		{"a bad environment, for dist to report", map[string]string{"RANK": "1"}, 4, "0", "default", ""},
		{"GLUA_DEVICE chosen", with(torchrun, "GLUA_DEVICE", "2"), 4, "2", "$GLUA_DEVICE", ""},
		{"a file's device, every rank's", with(torchrun, "GLUA_CONFIG", "../../config.toml"), 4, "1", "local rank (torchrun)", ""},
		{"more local ranks than GPUs", slurm, 2, "", "",
			"rank 3 of 4 (local 3), from slurm: the cuda backend has 2 devices here, one a rank: start at most 2 ranks on this node, or set GLUA_DEVICE"},
	} {
		env := tc.env
		getenv := func(k string) string { return env[k] }
		cfg, err := (options{}).configure(func(k string) string {
			if k == "GLUA_CONFIG" && env[k] == "" {
				return "/dev/null"
			}
			return getenv(k)
		})
		if err != nil {
			t.Fatal(err)
		}
		count := func(config.Config) (string, int, error) { return "cuda", tc.devices, nil }
		err = rankDevice(&cfg, getenv, count)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: %v, want %s", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || cfg.Value("cuda.device") != tc.device || cfg.Origin("cuda.device") != tc.origin {
			t.Errorf("%s: device %s from %s, %v; want %s from %s", tc.name, cfg.Value("cuda.device"), cfg.Origin("cuda.device"), err, tc.device, tc.origin)
		}
	}
}

// survivorsAbsent waits until the ranks would have written their files
// had they not been stopped, then checks that none did.
func survivorsAbsent(t *testing.T, dir string, start time.Time, after time.Duration) {
	t.Helper()
	time.Sleep(time.Until(start.Add(after + 1500*time.Millisecond)))
	if found, _ := filepath.Glob(filepath.Join(dir, "survivor-*")); len(found) > 0 {
		t.Errorf("ranks went on running after the launcher stopped them: %v", found)
	}
}

func TestAFailingRankStopsTheOthersAtOnce(t *testing.T) {
	t.Parallel()
	const survive = 4 * time.Second
	dir := copyTestdata(t, "rank_fails.lua")
	start := time.Now()
	r := invocation{dir: dir, args: []string{"--nproc", "3", "--allow-oversubscribe", "rank_fails.lua", "4"}}.glua(t)
	took := time.Since(start)
	expect(t, r, 1, `^(\[[02]\] ready\n)*$`, `(?m)^\[1\] glua: rank_fails\.lua:4: boom\n\[1\] stack traceback:\n(.|\n)*^glua: rank 1 failed: rank_fails\.lua:4: boom; stopping the other ranks\n$`)
	if took > survive-time.Second {
		t.Errorf("the launcher ended %v after rank 1 failed", took)
	}
	survivorsAbsent(t, dir, start, survive)
}

// startRanks starts a launcher of n ranks on backend that each print
// "ready", spin for 4 s and then leave a survivor file, and returns once
// all are ready. The caller signals the launcher and waits on it.
func startRanks(t *testing.T, dir, backend string, n int) (*exec.Cmd, *bufio.Scanner, *strings.Builder) {
	t.Helper()
	script := "print('ready') io.stdout:flush() local s = os.clock() while os.clock() - s < 4 do end " +
		"io.open('survivor-' .. os.getenv('GLUA_RANK'), 'w'):close()"
	args := []string{"--nproc", strconv.Itoa(n), "--backend", backend}
	if backend == "cpu" {
		args = append(args, "--allow-oversubscribe")
	}
	cmd := exec.Command(gluaBin, append(args, "-e", script)...)
	cmd.Dir = dir
	cmd.Env = cleanEnv(t)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := new(strings.Builder)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	for ready := 0; ready < n; ready++ {
		if !lines.Scan() {
			t.Fatalf("the ranks did not all start; stderr:\n%s", stderr.String())
		}
	}
	return cmd, lines, stderr
}

// SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal closed) each stop
// every rank, and the launcher exits as a shell reports the signal.
func TestCtrlCTermOrHangupOnTheLauncherStopsEveryRank(t *testing.T) {
	t.Parallel()
	checkSignalsStopEveryRank(t, "cpu", 3, true)
}

func checkSignalsStopEveryRank(t *testing.T, backend string, n int, parallel bool) {
	const survive = 4 * time.Second
	for _, tc := range []struct {
		sig  syscall.Signal
		name string
	}{{syscall.SIGINT, "interrupt"}, {syscall.SIGTERM, "terminated"}, {syscall.SIGHUP, "hangup"}} {
		t.Run(tc.name, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			dir := t.TempDir()
			start := time.Now()
			cmd, lines, stderr := startRanks(t, dir, backend, n)
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			for lines.Scan() {
			}
			err := cmd.Wait()
			took := time.Since(start)
			if want := 128 + int(tc.sig); cmd.ProcessState.ExitCode() != want {
				t.Errorf("the launcher exited with %v after %v, want status %d; stderr:\n%s", err, tc.sig, want, stderr.String())
			}
			if want := "glua: " + tc.name + ": stopping every rank\n"; stderr.String() != want {
				t.Errorf("stderr is %q, want %q", stderr.String(), want)
			}
			if took > survive-time.Second {
				t.Errorf("the launcher ended %v after it started, past the %v", took, tc.sig)
			}
			survivorsAbsent(t, dir, start, survive)
		})
	}
}

// A launcher killed outright (SIGKILL, the OOM killer) runs no handler;
// its ranks end with it all the same instead of running on with parent 1.
func TestRanksEndWhenTheirLauncherIsKilled(t *testing.T) {
	t.Parallel()
	checkRanksEndWithLauncher(t, "cpu", 3)
}

func checkRanksEndWithLauncher(t *testing.T, backend string, n int) {
	if goruntime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	const survive = 4 * time.Second
	dir := t.TempDir()
	start := time.Now()
	cmd, _, _ := startRanks(t, dir, backend, n)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	survivorsAbsent(t, dir, start, survive)
}

func TestInfoShowsTheRankEnvironmentFound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, "single process"},
		{[]string{"RANK=1", "WORLD_SIZE=4", "LOCAL_RANK=1", "MASTER_ADDR=10.0.0.1", "MASTER_PORT=29500"}, "rank 1 of 4 (local 1), from torchrun; master 10.0.0.1:29501"},
		{[]string{"SLURM_PROCID=3", "SLURM_NTASKS=8", "SLURM_LOCALID=1"}, "rank 3 of 8 (local 1), from slurm"},
		{[]string{"WORLD_SIZE=4"}, "the torchrun launch environment: WORLD_SIZE is set but RANK is not"},
	} {
		r := invocation{dir: t.TempDir(), env: tc.env, args: []string{"--info"}}.glua(t)
		expect(t, r, 0, "(?m)^rank environment: "+regexp.QuoteMeta(tc.want)+"$", "")
	}
	r := runGlua(t, "--nproc", "2", "--allow-oversubscribe", "--info")
	for rank := range 2 {
		expect(t, r, 0, fmt.Sprintf(`(?m)^\[%d\] rank environment: rank %d of 2 \(local %d\), from glua; master 127\.0\.0\.1:\d+$`, rank, rank, rank), "")
	}
}

// A CPU-backend job that launches no kernel never starts the GPU driver:
// on a GPU host each start costs a process a fraction of a second, and the
// driver queues the starts of every process (a launcher, its ranks, many
// jobs at once). The driver here is a named pipe that never answers, so a
// glua that opens it hangs.
func TestACPUJobThatLaunchesNoKernelNeverWaitsForTheGPUDriver(t *testing.T) {
	t.Parallel()
	driver := filepath.Join(t.TempDir(), "libcuda.so.1")
	if err := syscall.Mkfifo(driver, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	script := "local dist, cuda = require('dist'), require('cuda') local x = cuda.ones({10}) " +
		"dist.all_reduce(x, 'sum') print(dist.rank(), x[1])"
	cmd := exec.CommandContext(ctx, gluaBin, "--nproc", "2", "--backend", "cpu", "--allow-oversubscribe", "-e", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(cleanEnv(t), "GLUA_LIBCUDA="+driver)
	cmd.WaitDelay = time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the job was still running after %v: it waited for the GPU driver; output:\n%s", time.Since(start), out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(lines)
	if want := []string{"[0] 0\t2", "[1] 1\t2"}; err != nil || !slices.Equal(lines, want) {
		t.Errorf("glua: %v, output %q, want %q", err, lines, want)
	}
}
