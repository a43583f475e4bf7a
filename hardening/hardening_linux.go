//go:build linux

package hardening

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// DisableCoreDumps sets the process's core file size limit (RLIMIT_CORE,
// soft and hard) to 0 and marks the process not dumpable
// (prctl(PR_SET_DUMPABLE, 0)): the kernel then writes no core file of it,
// even through a core_pattern pipe such as systemd-coredump, and
// processes of the same user without CAP_SYS_PTRACE can neither ptrace
// it nor read its /proc/<pid>/mem. The latter also makes /proc/self files
// owned by root, which some monitoring agents notice. The core limit is
// inherited by child processes; the dumpable flag is reset by execve.
// Call it early in main. The first error is returned, after both were
// tried.
func DisableCoreDumps() error {
	err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0})
	if err != nil {
		err = fmt.Errorf("hardening: setrlimit(RLIMIT_CORE): %w", err)
	}
	if perr := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); perr != nil && err == nil {
		err = fmt.Errorf("hardening: prctl(PR_SET_DUMPABLE): %w", perr)
	}
	return err
}

func allocPages(n int) *Buffer {
	b, err := unix.Mmap(-1, 0, roundPage(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil
	}
	buf := &Buffer{b: b[:n:n], pages: b, mapped: true}
	buf.dump = unix.Madvise(b, unix.MADV_DONTDUMP) == nil
	unix.Madvise(b, unix.MADV_WIPEONFORK) // a forked child sees zeros; Linux 4.14+
	buf.locked = unix.Mlock(b) == nil
	return buf
}

func freePages(b *Buffer) {
	if b.locked {
		unix.Munlock(b.pages)
	}
	unix.Munmap(b.pages)
}

func roundPage(n int) int {
	p := unix.Getpagesize()
	return (n + p - 1) / p * p
}
