//go:build !linux

package main

import "syscall"

// rankProcAttr makes each rank the leader of its own process group. Only
// Linux has a parent-death signal; elsewhere a launcher ended by SIGKILL
// leaves its ranks to the group's timeout.
func rankProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
