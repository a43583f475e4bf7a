//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package guard

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) on f without waiting. The lock
// goes when f is closed or the process dies.
func lockFile(f *os.File) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := sc.Control(func(fd uintptr) {
		for {
			lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
			if lerr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return lerr
}
