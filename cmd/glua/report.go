package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// envReportFD names the descriptor on which a rank of glua --nproc tells
// its launcher that its script failed, at once, before it closes its
// runtime: the launcher stops the other ranks then, rather than when the
// rank has exited, and names the rank that failed first even when
// another, told of the failure, exits before it.
const envReportFD = "GLUA_REPORT_FD"

// reportFD is the descriptor a child gets as ExtraFiles[0].
const reportFD = 3

// launcherReport is where this rank reports a failure to glua --nproc;
// nil when no glua launcher started it. The descriptor is kept from the
// programs a script starts, and the variable with it.
var launcherReport = func() *os.File {
	text := os.Getenv(envReportFD)
	if text == "" {
		return nil
	}
	os.Unsetenv(envReportFD)
	fd, err := strconv.Atoi(text)
	if err != nil || fd < 0 {
		return nil
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "launcher report")
}()

// tellLauncher reports msg, this rank's error, to its launcher: the wall
// time in nanoseconds, which the ranks of one host share, and the
// message's first line, quoted.
func tellLauncher(msg string) {
	if launcherReport == nil {
		return
	}
	first, _, _ := strings.Cut(msg, "\n")
	fmt.Fprintf(launcherReport, "%d %s\n", time.Now().UnixNano(), strconv.Quote(first))
}

// failure is what ended a job: when (Unix nanoseconds, by the clock of
// the rank or launcher that saw it) and what, "rank 3 failed: ...";
// remote when another node's launcher told of it.
type failure struct {
	at     int64
	what   string
	remote bool
}

// readReports passes on what rank (the job's number) writes on its report
// pipe until it closes.
func readReports(rank int, r *os.File, reports chan<- failure) {
	defer r.Close()
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		at, quoted, ok := strings.Cut(lines.Text(), " ")
		ns, err := strconv.ParseInt(at, 10, 64)
		if !ok || err != nil {
			continue
		}
		msg, err := strconv.Unquote(quoted)
		if err != nil {
			continue
		}
		reports <- failure{at: ns, what: fmt.Sprintf("rank %d failed: %s", rank, msg)}
	}
}

// reportWindow is how long the launcher, told of a first failure, waits
// for other news before it names one: a rank told by the failing one can
// report, and its launcher read it, before the failing rank's own report
// or the other node's word of it is read.
const reportWindow = 150 * time.Millisecond

// earliest is the earliest of first and the failures that come from
// reports or remote within reportWindow; each report is also given to
// forward as it comes.
func earliest(first failure, reports, remote <-chan failure, forward func(failure)) failure {
	window := time.After(reportWindow)
	for {
		var f failure
		select {
		case f = <-reports:
			forward(f)
		case f = <-remote:
		case <-window:
			return first
		}
		if f.at < first.at {
			first = f
		}
	}
}
