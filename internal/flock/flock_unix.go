//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package flock

import (
	"fmt"
	"os"
	"syscall"
)

func tryLock(f *os.File) error {
	return control(f, syscall.LOCK_EX|syscall.LOCK_NB)
}

func unlock(f *os.File) error { return control(f, syscall.LOCK_UN) }

func control(f *os.File, how int) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := sc.Control(func(fd uintptr) {
		for {
			lerr = syscall.Flock(int(fd), how)
			if lerr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if lerr == syscall.EWOULDBLOCK {
		return fmt.Errorf("%s: %w (%w)", f.Name(), ErrLocked, lerr)
	}
	return lerr
}
