package main

import "syscall"

// rankProcAttr makes each rank the leader of its own process group and
// has the kernel kill it when the launcher dies, whatever ends the
// launcher (SIGKILL included, which no handler sees): a rank left running
// with parent 1 would keep its GPU. Go's fork checks the parent again
// after setting the signal, so a launcher that dies meanwhile is seen too.
// The signal comes when the thread that started the rank ends; the
// launcher never locks a thread, so its threads live as long as it does.
func rankProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
