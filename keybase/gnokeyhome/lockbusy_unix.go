//go:build unix

package gnokeyhome

import (
	"errors"
	"syscall"
)

// lockBusy reports whether err is goleveldb failing to take LOCK because
// another process holds it: flock(2) (fcntl(2) on Solaris) with LOCK_NB
// fails with EWOULDBLOCK or EAGAIN (the same number on Linux).
func lockBusy(err error) bool {
	return errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN)
}
