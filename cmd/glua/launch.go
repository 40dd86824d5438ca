package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/dist"
	"github.com/gluaproject/glua/internal/freeport"
	"github.com/gluaproject/glua/runtime"
)

// The rank environment is read by dist, which the runtime does not
// import; --info shows it through this line.
func init() {
	runtime.RegisterInfo(runtime.InfoLine{Label: "rank environment", Text: rankEnvironment})
}

// rankEnvironment is the place dist finds, or why it finds none.
func rankEnvironment() string {
	p, err := dist.FromEnv(os.Getenv)
	if err != nil {
		return err.Error()
	}
	return p.String()
}

// rankDevice gives a rank that torchrun, srun or mpirun started its own
// device, as glua --nproc does through GLUA_DEVICE: device local_rank,
// since ranks cannot share a GPU under NCCL. It leaves cuda.device alone
// when this rank was given one (--device, GLUA_DEVICE; a configuration
// file's is every rank's, so not this rank's own), without a launcher or
// under glua's own, and when the backend has one device: the CPU's, or
// a GPU the launcher gave this process alone (CUDA_VISIBLE_DEVICES naming
// one, as Slurm's per-task GPU binding does), which is then device 0. A
// launch environment that describes no place is left for dist to report
// at its first call, so that a script that never calls dist still runs.
func rankDevice(cfg *config.Config, getenv func(string) string, count func(config.Config) (string, int, error)) error {
	const key = "cuda.device"
	if o := cfg.Origin(key); o != "default" && o != "file" {
		return nil
	}
	p, err := dist.FromEnv(getenv)
	if err != nil || p.From == "none" || p.From == "glua" || p.LocalRank == 0 {
		return nil
	}
	backendName, n, err := count(*cfg)
	if err != nil || n <= 1 {
		// Opening the backend again reports what went wrong.
		return nil
	}
	if p.LocalRank >= n {
		return fmt.Errorf("%s: the %s backend has %s here, one a rank: start at most %d ranks on this node, or set %s",
			p, backendName, plural(n, "device"), n, deviceEnv)
	}
	return cfg.Set(key, strconv.Itoa(p.LocalRank), "local rank ("+p.From+")")
}

// stopGrace is how long a rank told to stop (SIGTERM) has before it is
// killed.
const stopGrace = 3 * time.Second

// launch is glua --nproc n with n > 1, or one node's launcher of several
// (--nnodes): it starts this node's ranks of this same program with the
// command line less the launcher's options, prefixes their output lines
// with their rank, and ends as soon as one fails, stopping the rest, and
// with several nodes those of every node. It returns the exit status.
func launch(o options, argv []string, spec nodeSpec) int {
	n := spec.perNode
	cfg, err := o.checkLaunch(argv, n)
	if err != nil {
		message(err.Error())
		return 1
	}
	backendName, count, err := runtime.DeviceCount(cfg)
	if err != nil {
		message(fmt.Sprintf("--nproc %d: counting the devices: %v", n, err))
		return 1
	}
	place := jobPlace{first: 0, world: n}
	var link *nodeLink
	if spec.nnodes > 1 {
		timeout, err := cfg.DistTimeout()
		if err != nil {
			message(fmt.Sprintf("[dist] timeout: %v", err))
			return 1
		}
		// The devices are checked before the launchers meet, so that a
		// node that cannot run its ranks fails alone and at once.
		if _, err := planRanks(backendName, count, n, o.oversubscribe, os.Getenv("CUDA_VISIBLE_DEVICES"), os.LookupEnv, place); err != nil {
			message(err.Error())
			return 1
		}
		if link, err = joinNodes(spec, timeout); err != nil {
			message(err.Error())
			return 1
		}
		place = jobPlace{first: spec.first(), world: spec.world(), commID: spec.commID(), torchrun: spec.torchrunEnv}
	}
	plan, err := planRanks(backendName, count, n, o.oversubscribe, os.Getenv("CUDA_VISIBLE_DEVICES"), os.LookupEnv, place)
	if err != nil {
		message(err.Error())
		if link != nil {
			link.fail(failure{at: time.Now().UnixNano(), what: err.Error()})
			link.finish(1)
		}
		return 1
	}
	exe, err := os.Executable()
	if err != nil {
		message(fmt.Sprintf("--nproc: cannot find glua's own program to start the ranks: %v", err))
		if link != nil {
			link.fail(failure{at: time.Now().UnixNano(), what: "cannot start its ranks"})
			link.finish(1)
		}
		return 1
	}
	return runRanks(exe, rankArgs(argv, o), plan, place.first, link)
}

// jobPlace is where one node's ranks stand in the job: ranks first to
// first+n-1 of world, meeting at commID ("" for a free local port), with
// torchrun's variables for each local rank where several nodes run.
type jobPlace struct {
	first, world int
	commID       string
	torchrun     func(local int) []string
}

// checkLaunch refuses what n ranks cannot share before anything starts,
// and returns the configuration the ranks will read.
func (o options) checkLaunch(argv []string, n int) (config.Config, error) {
	stdinScript := o.script > 0 && argv[o.script] == "-" && argv[o.script-1] != "--"
	switch {
	case o.interactive:
		return config.Config{}, fmt.Errorf("--nproc %d: -i would start %d prompts on one terminal; run a script", n, n)
	case o.script == 0 && !hasStep(o.steps, 'e') && !o.info, stdinScript:
		return config.Config{}, fmt.Errorf("--nproc %d: the ranks need a script or -e; stdin cannot be shared by %d ranks", n, n)
	case o.ignoreEnv:
		return config.Config{}, fmt.Errorf("--nproc %d: -E would make each rank ignore %s, which gives it its device", n, deviceEnv)
	}
	if _, ok := o.settings["device"]; ok {
		return config.Config{}, fmt.Errorf("--nproc %d: --device cannot be given too: rank r uses device r", n)
	}
	if _, ok := o.settings["memory-profile"]; ok {
		return config.Config{}, fmt.Errorf("--nproc %d: --memory-profile would have every rank write one file", n)
	}
	return o.configure(os.Getenv)
}

// deviceEnv is the variable of the configuration's cuda.device, through
// which each rank is given its device.
var deviceEnv = func() string {
	for _, k := range config.Keys {
		if k.Name == "cuda.device" {
			return k.Env
		}
	}
	panic("config.Keys has no cuda.device")
}()

// rankPlan is what the launcher gives each of its ranks: its variables.
type rankPlan [][]string

// planRanks chooses each of this node's n ranks' device, among the count
// devices of the backend named, and their places in the job. Local rank r
// gets device r; with CUDA_VISIBLE_DEVICES set, it sees only that list's
// r-th device, as device 0. More ranks than devices is allowed only on
// the CPU backend, whose one device the ranks then share: two ranks
// cannot share a GPU under NCCL.
func planRanks(backendName string, count, n int, oversubscribe bool, visible string, lookup func(string) (string, bool), place jobPlace) (rankPlan, error) {
	_, visibleSet := lookup("CUDA_VISIBLE_DEVICES")
	var entries []string
	for _, e := range strings.Split(visible, ",") {
		if e = strings.TrimSpace(e); e != "" {
			entries = append(entries, e)
		}
	}
	shared := n > count
	switch {
	case shared && backendName != "cpu":
		msg := fmt.Sprintf("--nproc %d: the %s backend has %s", n, backendName, plural(count, "device"))
		if visibleSet {
			msg += fmt.Sprintf(" (CUDA_VISIBLE_DEVICES=%s)", visible)
		}
		msg += "; one rank a device"
		if oversubscribe {
			msg += " (--allow-oversubscribe is for the CPU backend only)"
		}
		return nil, errors.New(msg)
	case shared && !oversubscribe:
		return nil, fmt.Errorf("--nproc %d: the %s backend has %s, which %d ranks would share; add --allow-oversubscribe to run them so",
			n, backendName, plural(count, "device"), n)
	case !shared && visibleSet && len(entries) < n:
		return nil, fmt.Errorf("--nproc %d: CUDA_VISIBLE_DEVICES=%s lists %s", n, visible, plural(len(entries), "device"))
	}
	commID := place.commID
	if commID == "" {
		var err error
		if commID, err = freeport.Local(); err != nil {
			return nil, fmt.Errorf("--nproc %d: finding a free local port for %s: %w", n, dist.EnvCommID, err)
		}
	}
	world := max(place.world, n)
	plan := make(rankPlan, n)
	for r := range n {
		env := []string{
			dist.EnvRank + "=" + strconv.Itoa(place.first+r),
			dist.EnvWorldSize + "=" + strconv.Itoa(world),
			dist.EnvLocalRank + "=" + strconv.Itoa(r),
			dist.EnvCommID + "=" + commID,
		}
		if place.torchrun != nil {
			env = append(env, place.torchrun(r)...)
		}
		switch {
		case shared:
			env = append(env, deviceEnv+"="+strconv.Itoa(r%count))
		case visibleSet:
			env = append(env, "CUDA_VISIBLE_DEVICES="+entries[r], deviceEnv+"=0")
		default:
			env = append(env, deviceEnv+"="+strconv.Itoa(r))
		}
		plan[r] = env
	}
	return plan, nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// rankArgs is the command line each rank runs: argv less --nproc, its
// value and --allow-oversubscribe, so that a rank does not launch again.
func rankArgs(argv []string, o options) []string {
	var args []string
	for i, a := range argv[1:] {
		if !slices.Contains(o.launcherArgs, i+1) {
			args = append(args, a)
		}
	}
	return args
}

// rankExit is a rank that has ended and how.
type rankExit struct {
	rank int
	err  error // from exec.Cmd.Wait
}

// runRanks starts the ranks and waits for them. The first to report a
// failed script (tellLauncher) or to exit with an error, or a
// SIGINT, SIGTERM or SIGHUP to the launcher, stops the others: SIGTERM to each
// rank's process group, then SIGKILL after stopGrace. Each rank is the
// leader of its own group, so that what a script started (os.execute)
// is stopped with it, and so that Ctrl-C at a terminal reaches the
// launcher alone, which stops every rank once.
//
// first is the job's number of this node's first rank, which names the
// ranks in their prefixes and messages. With link, the ranks of the other
// nodes are stopped too when this node's fail, and this node's when
// another node's fail or its launcher goes away.
func runRanks(exe string, args []string, plan rankPlan, first int, link *nodeLink) int {
	n := len(plan)
	stdout, stderr := &lineSink{w: os.Stdout}, &lineSink{w: os.Stderr}
	signals := make(chan os.Signal, 1)
	// SIGHUP (the terminal closed) ends the job as SIGTERM does.
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)

	cmds := make([]*exec.Cmd, 0, n)
	exits := make(chan rankExit, n)
	reports := make(chan failure, n)
	running := map[int]bool{}
	stop := func(sig syscall.Signal) {
		for r, cmd := range cmds {
			if running[r] {
				// The group may be gone already; nothing else is to be done.
				_ = syscall.Kill(-cmd.Process.Pid, sig)
			}
		}
	}
	for r, env := range plan {
		out := &rankWriter{sink: stdout, prefix: []byte(fmt.Sprintf("[%d] ", first+r))}
		errw := &rankWriter{sink: stderr, prefix: out.prefix}
		cmd := exec.Command(exe, args...)
		cmd.Args[0] = os.Args[0]
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = out, errw
		cmd.SysProcAttr = rankProcAttr()
		// A grandchild holding the pipes open must not keep the
		// launcher waiting once its rank has ended.
		cmd.WaitDelay = stopGrace
		reportR, reportW, err := os.Pipe()
		if err == nil {
			cmd.ExtraFiles = []*os.File{reportW}
			cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", envReportFD, reportFD))
			err = cmd.Start()
			reportW.Close()
			if err != nil {
				reportR.Close()
			}
		}
		if err != nil {
			msg := fmt.Sprintf("--nproc: starting rank %d: %v", first+r, err)
			message(msg)
			stop(syscall.SIGKILL)
			for range len(cmds) {
				<-exits
			}
			if link != nil {
				link.fail(failure{at: time.Now().UnixNano(), what: msg})
				return link.finish(1)
			}
			return 1
		}
		cmds = append(cmds, cmd)
		running[r] = true
		go readReports(first+r, reportR, reports)
		go func() {
			err := cmd.Wait()
			out.flush()
			errw.flush()
			exits <- rankExit{rank: r, err: err}
		}()
	}

	status := 0
	var kill <-chan time.Time
	stopping := false
	stopAll := func() {
		stopping = true
		stop(syscall.SIGTERM)
		kill = time.After(stopGrace)
	}
	var stops <-chan failure
	if link != nil {
		stops = link.stops
	}
	// forward gives this node's failures to the other nodes as they come,
	// for each to name the earliest of all in its own window.
	forward := func(f failure) {
		if link != nil {
			link.fail(f)
		}
	}
	// fail names the failure that came first, among f and the news that
	// comes within reportWindow, and stops every rank.
	fail := func(f failure) failure {
		if !f.remote {
			forward(f)
		}
		f = earliest(f, reports, stops, forward)
		if f.remote {
			message(f.what + "; stopping this node's ranks")
		} else {
			message(f.what + "; stopping the other ranks")
		}
		stopAll()
		return f
	}
	for len(running) > 0 {
		select {
		case f := <-reports:
			if stopping {
				forward(f)
			} else {
				status = 1
				fail(f)
			}
		case e := <-exits:
			delete(running, e.rank)
			if e.err != nil && !stopping {
				// A report the launcher has not read yet names the
				// rank that failed first better than this exit does.
				why, code := describeExit(e.err)
				f := failure{at: time.Now().UnixNano(), what: fmt.Sprintf("rank %d %s", first+e.rank, why)}
				status = 1
				if fail(f) == f {
					status = code
				}
			}
		case f := <-stops:
			if !stopping {
				status = 1
				fail(f)
			}
		case sig := <-signals:
			if !stopping {
				status = 128 + int(sig.(syscall.Signal))
				message(fmt.Sprintf("%v: stopping every rank", sig))
				if link != nil {
					link.fail(failure{at: time.Now().UnixNano(), what: fmt.Sprintf("its launcher got %v", sig)})
				}
				stopAll()
			}
		case <-kill:
			stop(syscall.SIGKILL)
			kill = nil
		}
	}
	if link != nil {
		return link.finish(status)
	}
	return status
}

// describeExit words how a failed rank ended, and the launcher's exit
// status for it: the rank's own, or 128 plus the signal as a shell gives.
func describeExit(err error) (string, int) {
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return fmt.Sprintf("failed: %v", err), 1
	}
	if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was ended by signal %d (%v)", int(ws.Signal()), ws.Signal()), 128 + int(ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", exitErr.ExitCode()), exitErr.ExitCode()
}

// lineSink is the launcher's stdout or stderr, shared by every rank: a
// write holds only whole lines, so that ranks' lines never mix.
type lineSink struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *lineSink) write(p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.w.Write(p)
	return err
}

// rankWriter takes one rank's stdout or stderr and passes on each whole
// line with the rank's prefix, keeping a partial line until its end
// comes. os/exec writes to it from one goroutine and flush runs after
// that goroutine has ended, so it needs no lock of its own.
type rankWriter struct {
	sink    *lineSink
	prefix  []byte
	partial []byte
}

func (w *rankWriter) Write(p []byte) (int, error) {
	last := bytes.LastIndexByte(p, '\n')
	if last < 0 {
		w.partial = append(w.partial, p...)
		return len(p), nil
	}
	lines := append(w.partial, p[:last+1]...)
	var out []byte
	for len(lines) > 0 {
		end := bytes.IndexByte(lines, '\n') + 1
		out = append(append(out, w.prefix...), lines[:end]...)
		lines = lines[end:]
	}
	w.partial = append(w.partial[:0:0], p[last+1:]...)
	if err := w.sink.write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush passes on a last line that had no newline, ending it with one so
// that the next rank's line starts on its own.
func (w *rankWriter) flush() {
	if len(w.partial) > 0 {
		_ = w.sink.write(append(append(append([]byte(nil), w.prefix...), w.partial...), '\n'))
		w.partial = nil
	}
}
