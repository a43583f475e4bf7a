//go:build darwin || freebsd

package hardening

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// DisableCoreDumps sets the process's core file size limit (RLIMIT_CORE,
// soft and hard) to 0, so the kernel writes no core file of it. (On
// Linux it also marks the process not dumpable; here there is no such
// switch.)
func DisableCoreDumps() error {
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0}); err != nil {
		return fmt.Errorf("hardening: setrlimit(RLIMIT_CORE): %w", err)
	}
	return nil
}

func allocPages(n int) *Buffer {
	b, err := unix.Mmap(-1, 0, roundPage(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil
	}
	buf := &Buffer{b: b[:n:n], pages: b, mapped: true}
	buf.dump = noDump(b)
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
