package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gluaproject/glua/internal/freeport"
)

// These are glua --nnodes: a launcher a node, meeting at node 0's
// address, here two nodes on one host.

// portsHanded are the ports freePortPair has returned (P and P+1), which
// it never returns again: the tests run in parallel, and the system may
// hand a port just closed to the next listener, so that two jobs would
// meet on one address.
var portsHanded = struct {
	sync.Mutex
	taken map[int]bool
}{taken: map[int]bool{}}

// freePortPair is a port P of 127.0.0.1 free now with P+1 free too, and
// neither handed to another test of this process: the launchers meet on
// P, the ranks on P+1.
func freePortPair(t *testing.T) int {
	t.Helper()
	portsHanded.Lock()
	defer portsHanded.Unlock()
	for range 50 {
		p, err := freeport.Consecutive(2)
		if err != nil {
			t.Fatal(err)
		}
		if !portsHanded.taken[p] && !portsHanded.taken[p+1] {
			portsHanded.taken[p], portsHanded.taken[p+1] = true, true
			return p
		}
	}
	t.Fatal("no two free ports in a row")
	return 0
}

// node is one launcher of a two-node job, started.
type node struct {
	cmd            *exec.Cmd
	stdout, stderr *bytes.Buffer
}

func startNode(t *testing.T, dir string, rank, port int, env []string, args ...string) *node {
	t.Helper()
	all := append([]string{"--nnodes", "2", "--node-rank", strconv.Itoa(rank), "--master-addr", "127.0.0.1",
		"--master-port", strconv.Itoa(port)}, args...)
	cmd := exec.Command(gluaBin, all...)
	cmd.Dir = dir
	cmd.Env = append(append(cleanEnv(t), "GLUA_DIST_TIMEOUT=20s"), env...)
	n := &node{cmd: cmd, stdout: new(bytes.Buffer), stderr: new(bytes.Buffer)}
	cmd.Stdout, cmd.Stderr = n.stdout, n.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return n
}

func (n *node) wait() result {
	n.cmd.Wait()
	return result{stdout: n.stdout.String(), stderr: n.stderr.String(), code: n.cmd.ProcessState.ExitCode()}
}

// Two launchers meet, whichever starts first, and number their ranks node
// by node; each rank gets torchrun's variables and dist's place, and the
// four ranks reduce together.
func TestTwoLaunchersRunOneJobAsTwoNodes(t *testing.T) {
	t.Parallel()
	port := freePortPair(t)
	args := []string{"--nproc-per-node", "2", "--allow-oversubscribe", "--backend", "cpu", "nodes.lua"}
	one := startNode(t, "testdata", 1, port, nil, args...)
	time.Sleep(300 * time.Millisecond) // node 1 waits for node 0
	zero := startNode(t, "testdata", 0, port, nil, args...)
	r0, r1 := zero.wait(), one.wait()
	for nodeRank, r := range []result{r0, r1} {
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("node %d: %v", nodeRank, r)
		}
		var want []string
		for local := range 2 {
			rank := 2*nodeRank + local
			want = append(want,
				fmt.Sprintf("[%d] rank %d of 4 local %d of 2 node %d of 2 master 127.0.0.1:%d comm 127.0.0.1:%d dist %d 4 %d",
					rank, rank, local, nodeRank, port, port+1, rank, local),
				fmt.Sprintf("[%d] sum 10", rank))
		}
		slices.Sort(want)
		if got := sortedLines(r.stdout); !slices.Equal(got, want) {
			t.Errorf("node %d printed\n%q\nwant\n%q", nodeRank, got, want)
		}
	}
}

// A node whose launcher is killed outright ends the other node's ranks at
// once, and its own with it; the other launcher says why and fails.
func TestANodeWhoseLauncherDiesEndsTheOtherNodesRanks(t *testing.T) {
	t.Parallel()
	checkNodeLauncherDeath(t, 2, [2][]string{}, "--allow-oversubscribe", "--backend", "cpu")
}

// checkNodeLauncherDeath runs perNode ranks on each of two nodes, with
// env[r] added to node r's, kills node 1's launcher once its ranks are
// running, and checks that node 0 ends its ranks and fails at once.
func checkNodeLauncherDeath(t *testing.T, perNode int, env [2][]string, extra ...string) {
	t.Helper()
	const survive = 5 * time.Second
	dir := t.TempDir()
	port := freePortPair(t)
	args := append([]string{"--nproc-per-node", strconv.Itoa(perNode)}, extra...)
	args = append(args, "-e", "local dist = require('dist') dist.barrier() print('ready') io.stdout:flush() "+
		"local s = os.clock() while os.clock() - s < 5 do end io.open('survivor-' .. dist.rank(), 'w'):close()")
	start := time.Now()
	zero := startNode(t, dir, 0, port, env[0], args...)
	one := exec.Command(gluaBin, "--nnodes", "2", "--node-rank", "1", "--master-addr", "127.0.0.1", "--master-port", strconv.Itoa(port))
	one.Args = append(one.Args, args...)
	one.Dir = dir
	one.Env = append(append(cleanEnv(t), "GLUA_DIST_TIMEOUT=20s"), env[1]...)
	out, err := one.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := one.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	for ready := 0; ready < perNode; {
		if !lines.Scan() {
			t.Fatalf("node 1's ranks did not start; node 0: %v", zero.wait())
		}
		if strings.HasSuffix(lines.Text(), "] ready") {
			ready++
		}
	}
	one.Process.Kill()
	one.Wait()
	r := zero.wait()
	took := time.Since(start)
	if want := "glua: node 1's launcher went away; stopping this node's ranks\n"; r.code != 1 || !strings.HasSuffix(r.stderr, want) {
		t.Errorf("node 0 after node 1's launcher died: want status 1 and stderr %q; got %v", want, r)
	}
	if took > survive-time.Second {
		t.Errorf("node 0 ended %v after the start", took)
	}
	survivorsAbsent(t, dir, start, survive)
}

// A rank failing on one node stops the ranks of every node; each launcher
// names the rank and its message.
func TestARankFailingOnOneNodeStopsEveryNode(t *testing.T) {
	t.Parallel()
	port := freePortPair(t)
	args := []string{"--nproc-per-node", "2", "--allow-oversubscribe", "--backend", "cpu", "nodes.lua", "fail", "3"}
	start := time.Now()
	zero := startNode(t, "testdata", 0, port, nil, args...)
	one := startNode(t, "testdata", 1, port, nil, args...)
	r0, r1 := zero.wait(), one.wait()
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the nodes took %v to end", d)
	}
	failed := "rank 3 failed: nodes.lua:20: rank 3 fails"
	if !strings.HasSuffix(r1.stderr, "\nglua: "+failed+"; stopping the other ranks\n") || r1.code != 1 {
		t.Errorf("node 1: %v", r1)
	}
	if want := "glua: node 1: " + failed + "; stopping this node's ranks\n"; !strings.HasSuffix(r0.stderr, want) || r0.code != 1 {
		t.Errorf("node 0: want status 1 and stderr ending %q; got %v", want, r0)
	}
}

// Launch options that cannot make a job are refused before anything
// starts, by name.
func TestBadNodeOptionsAreErrorsNamingThem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nnodes", "2", "--master-addr", "127.0.0.1", "--master-port", "29500"}, "--nnodes 2: --node-rank is needed too"},
		{[]string{"--nnodes", "2", "--node-rank", "2", "--master-addr", "h", "--master-port", "29500"}, "--nnodes 2: --node-rank 2 is not between 0 and 1"},
		{[]string{"--nnodes", "2", "--node-rank", "1", "--master-addr", "h", "--master-port", "65535"}, `--master-port: "65535" is not a port number (1 to 65534: the ranks meet on the next)`},
		{[]string{"--nnodes", "0"}, "--nnodes: 0: it must be at least 1"},
		{[]string{"--node-rank", "1"}, "--node-rank needs --nnodes"},
		{[]string{"--nproc", "2", "--nproc-per-node", "3"}, "--nproc 2 and --nproc-per-node 3: give one of them"},
	} {
		r := invocation{dir: t.TempDir(), args: append(tc.args, "-e", "print('ran')")}.glua(t)
		expect(t, r, 1, "", "^glua: "+regexp.QuoteMeta(tc.want)+"\n$")
	}
}

// Launchers that disagree on the job fail together, before any rank
// starts, saying how.
func TestLaunchersThatDisagreeFailTogether(t *testing.T) {
	t.Parallel()
	port := freePortPair(t)
	zero := startNode(t, t.TempDir(), 0, port, nil, "--nproc-per-node", "2", "--allow-oversubscribe", "--backend", "cpu", "-e", "print('ran')")
	one := startNode(t, t.TempDir(), 1, port, nil, "--nproc-per-node", "1", "--backend", "cpu", "-e", "print('ran')")
	want := "node 1 has 1 ranks, node 0 2: every node runs as many"
	for nodeRank, r := range []result{zero.wait(), one.wait()} {
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, want) {
			t.Errorf("node %d: want status 1 and %q; got %v", nodeRank, want, r)
		}
	}
}
