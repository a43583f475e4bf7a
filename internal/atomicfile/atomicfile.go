// Package atomicfile writes files atomically and durably: the data goes
// to a fresh temporary file in the target's directory, which is synced and
// then renamed (or, for a file that must not exist yet, hard-linked) into
// place, and the directory is synced. A reader sees the old file or the
// new one, whole, and once a write returns nil the file and its name
// survive a power cut. It is the one implementation behind the daemon's
// state files, the guard's state files, keybase's key files, package
// inprocess's key files and the benchmark report.
//
// The temporary file is opened with O_CREATE|O_EXCL and O_NOFOLLOW under
// a name with 64 random bits, so a leftover or a planted symbolic link is
// never opened (another name is tried); it is removed when anything
// fails.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/signerkit/signerkit/internal/fileopen"
)

// Options says how a file is written. The zero value writes mode 0600
// under DefaultTempName.
type Options struct {
	// Perm is the mode of the new file; 0 means 0600. It is set with
	// fchmod, so the umask does not narrow it.
	Perm fs.FileMode
	// TempName returns the path of a temporary file for path, given a
	// random string; nil means DefaultTempName. Callers that remove
	// leftovers (RemoveTemps) name them their own way.
	TempName func(path, random string) string
	// Random returns the random part of a temporary name; nil means 16
	// hex digits from crypto/rand. Tests set it to collide with files
	// already there.
	Random func() string

	// fail, set only by this package's tests, is called before each step
	// ("write", "sync", "close", "place", "syncdir") and its error
	// returned as the step's.
	fail func(step string) error
}

// DefaultTempName is the temporary name of path when Options.TempName is
// nil: ".<base>.tmp-<random>" in path's directory.
func DefaultTempName(path, random string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-"+random)
}

// RandomHex returns 16 random hex digits, the default random part of a
// temporary name.
func RandomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (o *Options) step(name string) error {
	if o.fail == nil {
		return nil
	}
	return o.fail(name)
}

// TempAttempts bounds how many fresh temporary names CreateTemp tries
// before it gives up.
const TempAttempts = 8

// Temp is a temporary file that CreateTemp wrote and synced, not yet in
// place. Exactly one of Rename, Link or Remove should follow.
type Temp struct {
	target, name string
	opts         Options
	placed       bool
}

// Name returns the temporary file's path.
func (t *Temp) Name() string { return t.name }

// CreateTemp writes data to a new temporary file for path (see Options),
// syncs it and closes it. On failure nothing is left behind.
func CreateTemp(path string, data []byte, opts Options) (_ *Temp, err error) {
	f, tmp, err := openTemp(path, opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	perm := opts.Perm
	if perm == 0 {
		perm = 0o600
	}
	err = f.Chmod(perm)
	if err == nil {
		err = opts.step("write")
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = opts.step("sync")
	}
	if err == nil {
		err = f.Sync()
	}
	cerr := f.Close()
	if err == nil {
		if err = opts.step("close"); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, err
	}
	return &Temp{target: path, name: tmp, opts: opts}, nil
}

// openTemp opens a new temporary file for path for writing, mode 0600,
// never opening a file or a symbolic link already there.
func openTemp(path string, opts Options) (*os.File, string, error) {
	name, random := opts.TempName, opts.Random
	if name == nil {
		name = DefaultTempName
	}
	if random == nil {
		random = RandomHex
	}
	for range TempAttempts {
		tmp := name(path, random())
		f, _, err := fileopen.Open(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600, fileopen.NoFollow)
		if err == nil {
			return f, tmp, nil
		}
		if !errors.Is(err, fs.ErrExist) && !errors.Is(err, fileopen.ErrSymlink) {
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("no fresh temporary name for %s in %d tries: something keeps creating files or links in %s", path, TempAttempts, filepath.Dir(path))
}

// Rename moves the temporary file into place, replacing what is there.
// It does not sync the directory (SyncDir does). On failure the
// temporary file is removed.
func (t *Temp) Rename() error {
	err := t.opts.step("place")
	if err == nil {
		err = os.Rename(t.name, t.target)
	}
	if err != nil {
		t.Remove()
		return err
	}
	t.placed = true
	return nil
}

// Link puts the temporary file in place only if nothing is there: a hard
// link, which fails with an error wrapping fs.ErrExist if the target
// exists (a symbolic link included), where a rename would replace it. On
// a file system without hard links it checks with Lstat and renames (a
// file made between the two is replaced). It does not sync the
// directory. The temporary name is removed in every case.
func (t *Temp) Link() error {
	err := t.opts.step("place")
	if err == nil {
		if _, lerr := os.Lstat(t.target); lerr == nil {
			err = &fs.PathError{Op: "create", Path: t.target, Err: fs.ErrExist}
		}
	}
	if err != nil {
		t.Remove()
		return err
	}
	if err := os.Link(t.name, t.target); err != nil {
		if errors.Is(err, fs.ErrExist) {
			t.Remove()
			return err
		}
		return t.Rename()
	}
	t.placed = true
	_ = os.Remove(t.name)
	return nil
}

// Remove removes the temporary file unless it was put in place.
func (t *Temp) Remove() {
	if !t.placed {
		_ = os.Remove(t.name)
	}
}

// SyncDir makes the renames, links and removals in dir durable. Where
// directories cannot be opened for syncing (Windows) it does nothing.
func SyncDir(dir string) error { return syncDir(dir) }

// WriteFile replaces path by data, atomically and durably: CreateTemp,
// Rename, then SyncDir of path's directory.
func WriteFile(path string, data []byte, opts Options) error {
	return write(path, data, opts, (*Temp).Rename)
}

// CreateFile makes path holding data, atomically and durably, or fails
// with an error wrapping fs.ErrExist when path exists: CreateTemp, Link,
// then SyncDir of path's directory.
func CreateFile(path string, data []byte, opts Options) error {
	if _, err := os.Lstat(path); err == nil {
		return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	return write(path, data, opts, (*Temp).Link)
}

func write(path string, data []byte, opts Options, place func(*Temp) error) error {
	t, err := CreateTemp(path, data, opts)
	if err != nil {
		return err
	}
	if err := place(t); err != nil {
		return err
	}
	if err := opts.step("syncdir"); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// RemoveTemps removes the entries of dir that match accepts and that are
// older than age (by the entry's own modification time: a symbolic link
// is not followed); age 0 removes them whatever their age. It is for the
// temporary files of writes that crashed before their rename. Removing a
// link removes the link, never its target. Errors are ignored: a
// leftover is clutter, never read.
func RemoveTemps(dir string, accept func(fs.DirEntry) bool, age time.Duration) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !accept(e) {
			continue
		}
		if age > 0 {
			if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < age {
				continue
			}
		}
		_ = os.Remove(filepath.Join(dir, e.Name()))
	}
}
