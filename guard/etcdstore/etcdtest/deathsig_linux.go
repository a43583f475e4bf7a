package etcdtest

import "syscall"

// sysProcAttr puts a member in its own process group and has the kernel
// kill it when the test process dies, even of a panic that skips the
// test's cleanup.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
