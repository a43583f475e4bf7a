package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/signerkit/signerkit/internal/flock"
)

// FS is where the guard keeps its state files. DirFS, a directory on the
// operating system's file system, is the one to use; tests plug in their
// own to inject write and sync failures.
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

// File is an open state file. The guard writes it in place with WriteAt
// and makes each write durable with Sync before a signature is released.
type File interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	// Sync makes the data written so far durable (fdatasync(2) where the
	// system has it, else fsync(2)).
	Sync() error
	Close() error
}

// DirFS returns the FS of the directory dir, which must exist.
//
// Open takes an exclusive advisory lock (flock(2)) on the file where the
// system has one, so two processes cannot sign from the same state: the
// second gets an error. Create writes a temporary file, syncs it, renames it
// into place and syncs the directory, so a new state file is never seen
// half written and its name is not lost to a power cut. Sync is
// fdatasync(2) on Linux and fsync(2) elsewhere (F_FULLFSYNC on macOS, as
// os.File.Sync does there).
func DirFS(dir string) FS { return dirFS(dir) }

type dirFS string

func (d dirFS) Open(name string) (File, error) {
	f, err := os.OpenFile(filepath.Join(string(d), name), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := flock.TryLock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s is in use by another process: %w", f.Name(), err)
	}
	return osFile{f}, nil
}

func (d dirFS) Create(name string, data []byte) (err error) {
	path := filepath.Join(string(d), name)
	if _, err := os.Lstat(path); err == nil {
		return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	tmp, err := os.CreateTemp(string(d), "."+name+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	// A hard link fails if path exists, where a rename would replace it.
	if err = os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			os.Remove(tmp.Name())
			return err
		}
		// A file system without hard links: rename instead.
		if err = os.Rename(tmp.Name(), path); err != nil {
			os.Remove(tmp.Name())
			return err
		}
	} else {
		os.Remove(tmp.Name())
	}
	return syncDir(string(d))
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

type osFile struct{ *os.File }

func (f osFile) Sync() error { return datasync(f.File) }
