// Package flock takes advisory whole-file locks (flock(2)) without
// waiting, for the packages that keep one process per state file or
// directory: internal/statefile (guard's and frost's state files), daemon
// and keybase. A lock goes when its file is
// closed or its process dies, so a crash never leaves one behind.
//
// Where the system has no flock(2), TryLock succeeds and locks nothing.
package flock

import (
	"errors"
	"os"
)

// ErrLocked is returned by TryLock when another open file description,
// in this process or another, holds the lock.
var ErrLocked = errors.New("locked by another process")

// TryLock takes an exclusive lock on f, or fails at once with an error
// wrapping ErrLocked. It retries only on EINTR.
func TryLock(f *os.File) error { return tryLock(f) }

// Unlock releases the lock on f. Closing f does the same.
func Unlock(f *os.File) error { return unlock(f) }
