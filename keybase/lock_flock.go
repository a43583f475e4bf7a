//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package keybase

import (
	"errors"
	"os"
	"syscall"
)

// crossProcessLock says whether writers in other processes are locked out.
const crossProcessLock = true

// tryLock takes an exclusive flock(2) on f without blocking; false means
// another open file holds it. flock locks belong to the open file, so two
// Stores in one process exclude each other too.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
		return false, nil
	}
	return false, err
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// syncDir makes a rename or removal in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
