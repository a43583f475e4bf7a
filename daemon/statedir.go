package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/signerkit/signerkit/internal/fileopen"
	"github.com/signerkit/signerkit/internal/flock"
)

// LockFile is the file in the state directory that the daemon holds
// locked (flock(2)) for as long as it runs. It holds the daemon's pid.
const LockFile = "signerkit.lock"

// ErrStateInUse is wrapped by the error LockStateDir returns when another
// process, a running daemon or a state command, holds the state
// directory.
var ErrStateInUse = errors.New("the state directory is in use by another signerkit process")

// StateLock is a held lock on a state directory. Close releases it; so
// does the process's end, however it ends.
type StateLock struct{ f *os.File }

// LockStateDir checks the state directory (see CheckStateDir) and takes
// its lock without waiting. `signerkit start` takes it before it opens
// any key, so a second daemon on the same state never touches the device
// the first is signing with; the state commands that change the state
// take it too. When another process holds it, the error is a
// *StateInUseError naming the holder's pid.
func LockStateDir(dir string) (*StateLock, error) {
	if err := CheckStateDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, LockFile)
	f, _, err := fileopen.Open(path, os.O_RDWR|os.O_CREATE, 0o600, fileopen.NoFollow)
	if err != nil {
		return nil, fmt.Errorf("signerkit: state lock: %w", err)
	}
	err = flock.TryLock(f)
	// A state command that only looks (StateDirInUse) holds the lock for
	// a moment: wait that out before calling the directory in use.
	for i := 0; errors.Is(err, flock.ErrLocked) && i < 20; i++ {
		time.Sleep(10 * time.Millisecond)
		err = flock.TryLock(f)
	}
	if err != nil {
		f.Close()
		if errors.Is(err, flock.ErrLocked) {
			return nil, &StateInUseError{Dir: dir, PID: lockHolder(path)}
		}
		return nil, fmt.Errorf("signerkit: state lock: %w", err)
	}
	// The pid is for messages only: the lock is the flock, not the file.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &StateLock{f: f}, nil
}

// Close releases the lock.
func (l *StateLock) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// StateDirInUse reports whether a process holds dir's lock (a running
// daemon, or a state command). It writes nothing; to test the lock it
// takes it for an instant, which LockStateDir waits out.
func StateDirInUse(dir string) bool {
	f, _, err := fileopen.Open(filepath.Join(dir, LockFile), os.O_RDONLY, 0, fileopen.NoFollow)
	if err != nil {
		return false // no lock file: no daemon has run here
	}
	defer f.Close()
	return errors.Is(flock.TryLock(f), flock.ErrLocked)
}

// lockHolder returns the pid a lock file names, or 0.
func lockHolder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// StateDirError is a state directory the daemon refuses to use.
type StateDirError struct {
	Dir     string
	Problem string
}

func (e *StateDirError) Error() string {
	return fmt.Sprintf("signerkit: state_dir %s: %s", e.Dir, e.Problem)
}

// CheckStateDir refuses a state directory that others could change: a
// symbolic link (give the directory's own path), not a directory, owned
// by another user than the process's effective one, or writable by its
// group or by everyone. The state directory holds what stops the key
// from double signing; whoever can write to it can make the daemon sign
// twice. It returns a *StateDirError.
func CheckStateDir(dir string) error {
	dir = filepath.Clean(dir) // "link/" would resolve the link
	fi, err := os.Lstat(dir)
	if err != nil {
		return &StateDirError{Dir: dir, Problem: fmt.Sprintf("%v: run `signerkit init`, or create it (mode 0700) and run `signerkit state init`", errors.Unwrap(err))}
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &StateDirError{Dir: dir, Problem: "is a symbolic link; give the directory's own path"}
	case !fi.IsDir():
		return &StateDirError{Dir: dir, Problem: "is not a directory"}
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	if uid, ok := fileOwner(fi); ok {
		if euid := os.Geteuid(); uid != int64(euid) {
			return &StateDirError{Dir: dir, Problem: fmt.Sprintf("is owned by uid %d, not by this process's user (uid %d); run signerkit as the directory's owner, or chown it", uid, euid)}
		}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return &StateDirError{Dir: dir, Problem: fmt.Sprintf("mode %v is writable by others; chmod 700 it", perm)}
	}
	return nil
}

// warnStateDir logs what CheckStateDir lets pass but an operator should
// fix: a state directory others can read, and running as root.
func warnStateDir(log *slog.Logger, dir string) {
	if fi, err := os.Stat(dir); err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("state_dir is readable by other users; chmod 700 it", "dir", dir, "mode", fi.Mode().Perm().String())
	}
	if runtime.GOOS != "windows" && os.Geteuid() == 0 {
		log.Warn("running as root: run signerkit as a user of its own, owning state_dir and nothing else")
	}
}

// stateDamaged takes note of a chain whose state file the guard refuses
// as damaged: the daemon starts, serves its other chains, and refuses
// this one's signs (the guard does), with an ERROR, the state_damaged
// gauge at 1 and /readyz not ready, until an operator repairs it.
func (d *Daemon) stateDamaged(ch ChainConfig, err error) {
	if d.damaged == nil {
		d.damaged = map[string]error{}
	}
	d.damaged[ch.ID] = err
	d.m.stateDamaged.WithLabelValues(ch.ID).Set(1)
	d.log.Error("double-sign state damaged: refusing to sign for this chain; run `signerkit state show`, then `signerkit state repair` with the daemon stopped",
		"chain", ch.ID, "err", err)
}
