//go:build windows

package gnokeyhome

import (
	"errors"
	"syscall"
)

// lockBusy reports whether err is goleveldb failing to open LOCK because
// another process has it open: goleveldb opens it with no sharing, which
// fails with ERROR_SHARING_VIOLATION.
func lockBusy(err error) bool {
	return errors.Is(err, syscall.Errno(32)) // ERROR_SHARING_VIOLATION
}
