// Package statefile is the file interface of the state files that must
// survive a crash: the double-sign guard's (package guard) and the FROST
// nonce store's (package threshold/frost). Both packages re-export its
// types under their own names (guard.FS, frost.FS are the same type), so
// neither depends on the other. Dir is a directory on the operating
// system's file system; MemFS holds files in memory for tests.
package statefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/signerkit/signerkit/internal/atomicfile"
	"github.com/signerkit/signerkit/internal/flock"
)

// FS is where state files are kept. Dir, a directory, is the one to use;
// tests plug in their own to inject write and sync failures.
type FS interface {
	// Open opens the named state file for reading and writing. When there
	// is no such file the error satisfies errors.Is(err, fs.ErrNotExist).
	Open(name string) (File, error)
	// Create makes the named file with contents data, durably: once it
	// returns nil the file and its name survive a power loss. It fails,
	// with an error satisfying errors.Is(err, fs.ErrExist), if the file
	// already exists.
	Create(name string, data []byte) error
}

// File is an open state file, written in place with WriteAt and made
// durable with Sync.
type File interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	// Sync makes the data written so far durable (fdatasync(2) where the
	// system has it, else fsync(2)).
	Sync() error
	Close() error
}

// Dir is the FS of a directory, which must exist.
//
// Open takes an exclusive advisory lock (flock(2)) on the file where the
// system has one, so two processes cannot share a state file: the second
// gets an error. Create is atomicfile.CreateFile with mode 0600 (a
// temporary file, synced, linked into place, the directory synced), so a
// new state file is never seen half written and its name is not lost to
// a power cut. Sync is fdatasync(2) on Linux and fsync(2) elsewhere
// (F_FULLFSYNC on macOS, as os.File.Sync does there).
type Dir string

// Open opens and locks the named file.
func (d Dir) Open(name string) (File, error) {
	f, err := os.OpenFile(filepath.Join(string(d), name), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := flock.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, flock.ErrLocked) {
			return nil, fmt.Errorf("state file: %w: another process (a signerkit, or a program using package guard) has it open; stop it first", err)
		}
		return nil, fmt.Errorf("state file: %w", err)
	}
	return osFile{f}, nil
}

// Create makes the named file holding data, durably, or fails with an
// error wrapping fs.ErrExist.
func (d Dir) Create(name string, data []byte) error {
	return atomicfile.CreateFile(filepath.Join(string(d), name), data, atomicfile.Options{})
}

type osFile struct{ *os.File }

func (f osFile) Sync() error { return datasync(f.File) }
