package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gluaproject/glua/internal/hello"
)

// A job of several nodes is started by one launcher a node, as torchrun
// starts it: glua --nnodes 2 --node-rank R --master-addr HOST
// --master-port P --nproc-per-node N script.lua. The launchers meet at
// HOST:P, where node 0's listens, and stay connected while the job runs,
// so that a failure on one node, or a launcher that dies, stops the ranks
// of every node. The ranks meet at HOST:P+1 (NCCL_COMM_ID), where rank 0,
// on node 0, listens: the port after torchrun's store, as dist reads a
// torchrun environment.

// nodeSpec is this node's part of a launch: N ranks a node on nnodes
// nodes, this one nodeRank.
type nodeSpec struct {
	nnodes, nodeRank, perNode int
	masterAddr                string
	masterPort                int
}

// nodes reads the launch options: the number of ranks on this node, and
// the nodes when there are several (nnodes 1 otherwise). --nproc and
// --nproc-per-node are one option under two names.
func (o options) nodes() (nodeSpec, error) {
	spec := nodeSpec{nnodes: 1, perNode: 1}
	count := func(name string, least int) (int, bool, error) {
		v, ok := o.settings[name]
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		switch {
		case err != nil:
			return 0, true, fmt.Errorf("--%s: %q is not a whole number", name, v)
		case n < least:
			return 0, true, fmt.Errorf("--%s: %d: it must be at least %d", name, n, least)
		}
		return n, true, nil
	}
	n, nproc, err := o.nproc()
	if err != nil {
		return spec, err
	}
	spec.perNode = n
	perNode, given, err := count("nproc-per-node", 1)
	switch {
	case err != nil:
		return spec, err
	case given && nproc && perNode != n:
		return spec, fmt.Errorf("--nproc %d and --nproc-per-node %d: give one of them", n, perNode)
	case given:
		spec.perNode = perNode
	}
	nnodes, given, err := count("nnodes", 1)
	if err != nil || !given {
		for _, name := range []string{"node-rank", "master-addr", "master-port"} {
			if _, ok := o.settings[name]; ok && err == nil {
				err = fmt.Errorf("--%s needs --nnodes", name)
			}
		}
		return spec, err
	}
	spec.nnodes = nnodes
	if nnodes == 1 {
		return spec, nil
	}
	label := fmt.Sprintf("--nnodes %d", nnodes)
	for _, name := range []string{"node-rank", "master-addr", "master-port"} {
		if _, ok := o.settings[name]; !ok {
			return spec, fmt.Errorf("%s: --%s is needed too", label, name)
		}
	}
	if spec.nodeRank, _, err = count("node-rank", 0); err != nil {
		return spec, err
	}
	if spec.nodeRank >= nnodes {
		return spec, fmt.Errorf("%s: --node-rank %d is not between 0 and %d", label, spec.nodeRank, nnodes-1)
	}
	if spec.masterAddr = strings.TrimSpace(o.settings["master-addr"]); spec.masterAddr == "" {
		return spec, fmt.Errorf("--master-addr: no host")
	}
	port, err := strconv.Atoi(strings.TrimSpace(o.settings["master-port"]))
	if err != nil || port < 1 || port > 65534 {
		return spec, fmt.Errorf("--master-port: %q is not a port number (1 to 65534: the ranks meet on the next)", o.settings["master-port"])
	}
	spec.masterPort = port
	return spec, nil
}

// world is the number of ranks of the job; first this node's first rank.
func (s nodeSpec) world() int { return s.nnodes * s.perNode }
func (s nodeSpec) first() int { return s.nodeRank * s.perNode }

// commID is where the ranks meet: the port after the launchers'.
func (s nodeSpec) commID() string {
	return net.JoinHostPort(s.masterAddr, strconv.Itoa(s.masterPort+1))
}

// torchrunEnv is what torchrun sets for local rank local, for scripts and
// programs that read it.
func (s nodeSpec) torchrunEnv(local int) []string {
	return []string{
		"RANK=" + strconv.Itoa(s.first()+local),
		"WORLD_SIZE=" + strconv.Itoa(s.world()),
		"LOCAL_RANK=" + strconv.Itoa(local),
		"LOCAL_WORLD_SIZE=" + strconv.Itoa(s.perNode),
		"GROUP_RANK=" + strconv.Itoa(s.nodeRank),
		"GROUP_WORLD_SIZE=" + strconv.Itoa(s.nnodes),
		"MASTER_ADDR=" + s.masterAddr,
		"MASTER_PORT=" + strconv.Itoa(s.masterPort),
	}
}

// launchMagic opens a launcher's hello, so that node 0 tells a launcher
// from a stranger on its port.
const launchMagic = "glua-launch/1"

// nodeLink is this launcher's connection to the others: node 0's to every
// other node's, theirs to node 0's. stops gives what another node said
// when its job failed, or that a node's launcher went away. On the wire
// a failure is "stop NANOSECONDS WHAT".
type nodeLink struct {
	spec  nodeSpec
	stops chan failure

	mu      sync.Mutex
	members map[int]*member // node 0: the other nodes, by node rank
	hub     net.Conn        // the other nodes: node 0's launcher
	ended   bool            // this node has finished or failed: later losses are no news
	pending int             // node 0: members neither done nor gone
	allDone chan struct{}   // node 0: closed when pending reaches 0
	failed  bool            // a node's ranks failed, or a node went away
}

type member struct {
	node int
	conn net.Conn
	done bool
}

// joinNodes meets the other nodes' launchers within timeout: node 0
// listens at the master address and answers once every node has come;
// the others connect, retrying while node 0 is not up yet.
func joinNodes(spec nodeSpec, timeout time.Duration) (*nodeLink, error) {
	l := &nodeLink{spec: spec, stops: make(chan failure, spec.nnodes)}
	if spec.nodeRank == 0 {
		return l, l.host(timeout)
	}
	return l, l.join(timeout)
}

func (l *nodeLink) helloLine() string {
	return fmt.Sprintf("%s %d %d %d\n", launchMagic, l.spec.nodeRank, l.spec.nnodes, l.spec.perNode)
}

func (l *nodeLink) host(timeout time.Duration) error {
	s := l.spec
	addr := net.JoinHostPort("", strconv.Itoa(s.masterPort))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--node-rank 0: cannot listen on port %d for the other nodes: %w", s.masterPort, err)
	}
	defer ln.Close()
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(timeout))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	where := fmt.Sprintf("node 0's launcher at port %d", s.masterPort)
	greetings, _ := hello.Accept(ctx, ln, hello.Wait, where, readLauncherHello)
	l.members = map[int]*member{}
	reject := func(g hello.Greeting[[3]int], msg string) error {
		fmt.Fprintf(g.Conn, "error %s\n", msg)
		g.Conn.Close()
		l.tellAll("error " + msg)
		return errors.New(msg)
	}
	for len(l.members) < s.nnodes-1 {
		g, ok := <-greetings
		if !ok {
			var missing []string
			for n := 1; n < s.nnodes; n++ {
				if l.members[n] == nil {
					missing = append(missing, strconv.Itoa(n))
				}
			}
			msg := fmt.Sprintf("--nnodes %d: node %s did not come to %s within the timeout (%v)", s.nnodes, strings.Join(missing, ", "), where, timeout)
			l.tellAll("error " + msg)
			return errors.New(msg)
		}
		node, nnodes, perNode := g.Hello[0], g.Hello[1], g.Hello[2]
		switch {
		case nnodes != s.nnodes:
			return reject(g, fmt.Sprintf("node %d was started with --nnodes %d, node 0 with %d", node, nnodes, s.nnodes))
		case node < 1 || node >= s.nnodes:
			return reject(g, fmt.Sprintf("a launcher came as node %d; nodes are 0 to %d", node, s.nnodes-1))
		case l.members[node] != nil:
			return reject(g, fmt.Sprintf("two launchers came as node %d", node))
		case perNode != s.perNode:
			return reject(g, fmt.Sprintf("node %d has %d ranks, node 0 %d: every node runs as many", node, perNode, s.perNode))
		}
		l.members[node] = &member{node: node, conn: g.Conn}
	}
	l.pending = len(l.members)
	l.allDone = make(chan struct{})
	if l.pending == 0 {
		close(l.allDone)
	}
	l.tellAll(fmt.Sprintf("ok %d", s.world()))
	for _, m := range l.members {
		go l.watchMember(m)
	}
	return nil
}

// readLauncherHello reads "glua-launch/1 node nnodes perNode".
func readLauncherHello(conn net.Conn) ([3]int, error) {
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return [3]int{}, err
	}
	var h [3]int
	var magic string
	if n, _ := fmt.Sscanf(line, "%s %d %d %d", &magic, &h[0], &h[1], &h[2]); n != 4 || magic != launchMagic {
		return h, errors.New("not a glua launcher (bad hello)")
	}
	return h, nil
}

// tellAll sends line to every node that came; node 0 only.
func (l *nodeLink) tellAll(line string) {
	for _, m := range l.members {
		m.conn.SetWriteDeadline(time.Now().Add(time.Second))
		fmt.Fprintln(m.conn, line)
	}
}

// watchMember reads a node's news: done, a failure to pass on to this
// node's ranks and the other nodes, or its launcher gone.
func (l *nodeLink) watchMember(m *member) {
	lines := bufio.NewScanner(m.conn)
	for lines.Scan() {
		word, rest, _ := strings.Cut(lines.Text(), " ")
		switch word {
		case "done":
			l.mu.Lock()
			m.done = true
			if rest != "0" {
				l.failed = true
			}
			l.mu.Unlock()
		case "stop":
			l.stop(parseStop(rest), m.node)
		}
	}
	l.mu.Lock()
	gone := !m.done
	l.mu.Unlock()
	if gone {
		l.stop(failure{at: time.Now().UnixNano(), what: fmt.Sprintf("node %d's launcher went away", m.node), remote: true}, m.node)
	}
	l.mu.Lock()
	l.pending--
	if l.pending == 0 {
		close(l.allDone)
	}
	l.mu.Unlock()
}

// parseStop reads "NANOSECONDS WHAT".
func parseStop(text string) failure {
	at, what, _ := strings.Cut(text, " ")
	ns, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		ns, what = time.Now().UnixNano(), text
	}
	return failure{at: ns, what: what, remote: true}
}

// stop passes a failure on: to this node's ranks, unless they have ended,
// and from node 0 to every node but the one it came from.
func (l *nodeLink) stop(f failure, from int) {
	l.mu.Lock()
	ended := l.ended
	if !ended {
		l.failed = true
	}
	l.mu.Unlock()
	for _, m := range l.members {
		if m.node != from {
			m.conn.SetWriteDeadline(time.Now().Add(time.Second))
			fmt.Fprintf(m.conn, "stop %d %s\n", f.at, f.what)
		}
	}
	if !ended {
		select {
		case l.stops <- f:
		default:
		}
	}
}

func (l *nodeLink) join(timeout time.Duration) error {
	s := l.spec
	addr := net.JoinHostPort(s.masterAddr, strconv.Itoa(s.masterPort))
	deadline := time.Now().Add(timeout)
	var conn net.Conn
	for {
		var err error
		if conn, err = net.DialTimeout("tcp", addr, time.Until(deadline)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("--node-rank %d: could not reach node 0's launcher at %s within the timeout (%v): %v", s.nodeRank, addr, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := fmt.Fprint(conn, l.helloLine()); err != nil {
		conn.Close()
		return fmt.Errorf("--node-rank %d: node 0's launcher at %s: %w", s.nodeRank, addr, err)
	}
	conn.SetReadDeadline(deadline.Add(time.Second))
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		conn.Close()
		return fmt.Errorf("--node-rank %d: node 0's launcher at %s did not answer: %w", s.nodeRank, addr, err)
	}
	conn.SetReadDeadline(time.Time{})
	word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	if word != "ok" {
		conn.Close()
		return fmt.Errorf("--node-rank %d: %s", s.nodeRank, rest)
	}
	l.hub = conn
	go l.watchHub(r)
	return nil
}

// watchHub reads node 0's news: a failure to stop this node's ranks for,
// or node 0's launcher gone.
func (l *nodeLink) watchHub(r *bufio.Reader) {
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			l.stop(failure{at: time.Now().UnixNano(), what: "node 0's launcher went away", remote: true}, 0)
			return
		}
		if word, rest, _ := strings.Cut(strings.TrimSpace(line), " "); word == "stop" {
			l.stop(parseStop(rest), 0)
		}
	}
}

// fail tells the other nodes that this node's job failed, as f says.
func (l *nodeLink) fail(f failure) {
	line := fmt.Sprintf("stop %d node %d: %s\n", f.at, l.spec.nodeRank, f.what)
	l.mu.Lock()
	l.failed = true
	l.mu.Unlock()
	if l.hub != nil {
		l.hub.SetWriteDeadline(time.Now().Add(time.Second))
		fmt.Fprint(l.hub, line)
		return
	}
	for _, m := range l.members {
		m.conn.SetWriteDeadline(time.Now().Add(time.Second))
		fmt.Fprint(m.conn, line)
	}
}

// finish ends this node's part once its ranks have ended with status:
// the others learn it is done; node 0 waits for every node to finish, so
// that its leaving is not taken for a failure while they still run. It
// returns the launcher's exit status: 1 when another node failed.
func (l *nodeLink) finish(status int) int {
	l.mu.Lock()
	l.ended = true
	l.mu.Unlock()
	if l.hub != nil {
		l.hub.SetWriteDeadline(time.Now().Add(time.Second))
		fmt.Fprintf(l.hub, "done %d\n", status)
		l.hub.Close()
	} else {
		<-l.allDone
		for _, m := range l.members {
			m.conn.Close()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if status == 0 && l.failed {
		return 1
	}
	return status
}
