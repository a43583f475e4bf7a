//go:build unix

package daemon

import "syscall"

// openFileLimit returns the process's soft RLIMIT_NOFILE (Go raises it to
// the hard limit at start), or 0 when it cannot be read or is unlimited.
func openFileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	if c := uint64(r.Cur); c < 1<<62 { // RLIM_INFINITY is all ones, or int64's max
		return c
	}
	return 0
}
