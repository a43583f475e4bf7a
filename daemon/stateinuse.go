package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// StateInUseError is LockStateDir's error when another process holds the
// state directory: a running daemon, or a state command. It wraps
// ErrStateInUse.
type StateInUseError struct {
	Dir string
	// PID is the holder's process id as it wrote it in the lock file, or
	// 0 when unknown.
	PID int
}

func (e *StateInUseError) Error() string {
	who := "pid unknown: `fuser -v " + filepath.Join(e.Dir, LockFile) + "` shows it"
	stop := "stop it first (`systemctl stop signerkit`, or end that process)"
	if e.PID > 0 {
		who = fmt.Sprintf("pid %d", e.PID)
		stop = fmt.Sprintf("stop it first (`systemctl stop signerkit`, or `kill %d`)", e.PID)
	}
	return fmt.Sprintf("signerkit: another signerkit process (%s) holds the state directory %s: %s, then run this again. "+
		"Leave the state directory where it is: it is what keeps the key from signing twice", who, e.Dir, stop)
}

// Unwrap returns ErrStateInUse.
func (e *StateInUseError) Unwrap() error { return ErrStateInUse }

// makeStateDir makes dir, mode 0700, when it does not exist and its
// parent does.
func makeStateDir(dir string) error {
	dir = filepath.Clean(dir)
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil // there, or CheckStateDir says what is wrong
	}
	if _, err := os.Stat(filepath.Dir(dir)); errors.Is(err, fs.ErrNotExist) {
		return &StateDirError{Dir: dir, Problem: fmt.Sprintf("neither it nor its parent %s exists: check state_dir, or make it with `mkdir -p -m 0700 %s`",
			filepath.Dir(dir), dir)}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return &StateDirError{Dir: dir, Problem: fmt.Sprintf("cannot make it: %v", errors.Unwrap(err))}
	}
	return nil
}
