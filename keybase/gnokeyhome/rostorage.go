package gnokeyhome

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	lerrors "github.com/syndtr/goleveldb/leveldb/errors"
	"github.com/syndtr/goleveldb/leveldb/storage"
)

// lockName is goleveldb's lock file in a database's directory. goleveldb
// creates it when it opens a database, read-only included, and never
// removes it: a database without one has not been opened where it is (a
// copied or backed-up home, this package's fixture).
const lockName = "LOCK"

// errReadOnlyStorage is what roStorage returns for any write: none is
// expected of a read-only open, and none reaches the file system.
var errReadOnlyStorage = errors.New("gnokeyhome: the key database is read here without writing")

// roStorage is a goleveldb storage.Storage over a database's directory
// that only reads: it opens files with os.Open and takes no lock, so it
// creates no LOCK file (goleveldb's file storage creates one to take its
// shared lock on, even read-only, which writes to a copied home and fails
// on a read-only mount). Its reading follows goleveldb's file storage
// (v1.0.1-0.20210819022825-2ae1ddf74ef7) opened read-only: file names,
// CURRENT and its pending and backup copies, ".sst" as the old name of a
// table. It serves databases that have no LOCK; see openDB.
type roStorage struct {
	path string
}

var _ storage.Storage = roStorage{}

type noLock struct{}

func (noLock) Unlock() {}

// Lock takes no lock: a read-only open of goleveldb's file storage takes
// none either (it locks the LOCK file, which roStorage does not).
func (roStorage) Lock() (storage.Locker, error) { return noLock{}, nil }

// Log drops goleveldb's log lines, as its file storage does read-only.
func (roStorage) Log(string) {}

func (roStorage) SetMeta(storage.FileDesc) error { return errReadOnlyStorage }

func (roStorage) Create(storage.FileDesc) (storage.Writer, error) { return nil, errReadOnlyStorage }

func (roStorage) Remove(storage.FileDesc) error { return errReadOnlyStorage }

func (roStorage) Rename(storage.FileDesc, storage.FileDesc) error { return errReadOnlyStorage }

func (roStorage) Close() error { return nil }

func (s roStorage) names() ([]string, error) {
	d, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(0)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return names, err
}

// GetMeta returns the manifest CURRENT names: the newest of the pending
// "CURRENT.<n>" files goleveldb writes before renaming one to CURRENT,
// when newer than CURRENT (or CURRENT.bak when CURRENT is missing or
// corrupt), and os.ErrNotExist when none names a file that exists.
func (s roStorage) GetMeta() (storage.FileDesc, error) {
	names, err := s.names()
	if err != nil {
		return storage.FileDesc{}, err
	}
	var nums []int64
	for _, name := range names {
		if rest, ok := strings.CutPrefix(name, "CURRENT."); ok && rest != "bak" {
			if n, err := strconv.ParseInt(rest, 10, 64); err == nil {
				nums = append(nums, n)
			}
		}
	}
	sort.Slice(nums, func(i, j int) bool { return nums[i] > nums[j] })
	pending := make([]string, len(nums))
	for i, n := range nums {
		pending[i] = fmt.Sprintf("CURRENT.%d", n)
	}
	var pendFd storage.FileDesc
	pendErr := error(os.ErrNotExist)
	if len(pending) > 0 {
		pendFd, pendErr = s.tryCurrents(pending)
		if pendErr != nil && pendErr != os.ErrNotExist && !lerrors.IsCorrupted(pendErr) {
			return storage.FileDesc{}, pendErr
		}
	}
	curFd, curErr := s.tryCurrents([]string{"CURRENT", "CURRENT.bak"})
	if curErr != nil && curErr != os.ErrNotExist && !lerrors.IsCorrupted(curErr) {
		return storage.FileDesc{}, curErr
	}
	switch {
	case pendErr == nil && (curErr != nil || pendFd.Num > curFd.Num):
		return pendFd, nil
	case curErr == nil:
		return curFd, nil
	case lerrors.IsCorrupted(pendErr):
		return storage.FileDesc{}, pendErr
	}
	return storage.FileDesc{}, curErr
}

// tryCurrents returns the manifest the first of names that can be read
// names; os.ErrNotExist when none does, or the last corruption found.
func (s roStorage) tryCurrents(names []string) (storage.FileDesc, error) {
	var lastCorrupt error
	for _, name := range names {
		fd, err := s.tryCurrent(name)
		switch {
		case err == nil:
			return fd, nil
		case err == os.ErrNotExist:
		case lerrors.IsCorrupted(err):
			lastCorrupt = err
		default:
			return storage.FileDesc{}, err
		}
	}
	if lastCorrupt != nil {
		return storage.FileDesc{}, lastCorrupt
	}
	return storage.FileDesc{}, os.ErrNotExist
}

func (s roStorage) tryCurrent(name string) (storage.FileDesc, error) {
	b, err := os.ReadFile(filepath.Join(s.path, name))
	if err != nil {
		if os.IsNotExist(err) {
			err = os.ErrNotExist
		}
		return storage.FileDesc{}, err
	}
	fd, ok := storage.FileDesc{}, false
	if n := len(b); n > 0 && b[n-1] == '\n' {
		fd, ok = parseName(string(b[:n-1]))
	}
	if !ok {
		return storage.FileDesc{}, &storage.ErrCorrupted{Err: fmt.Errorf("leveldb/storage: corrupted or incomplete %s file", name)}
	}
	if _, err := os.Stat(filepath.Join(s.path, genName(fd))); err != nil {
		if os.IsNotExist(err) {
			err = os.ErrNotExist
		}
		return storage.FileDesc{}, err
	}
	return fd, nil
}

func (s roStorage) List(ft storage.FileType) ([]storage.FileDesc, error) {
	names, err := s.names()
	if err != nil {
		return nil, err
	}
	var fds []storage.FileDesc
	for _, name := range names {
		if fd, ok := parseName(name); ok && fd.Type&ft != 0 {
			fds = append(fds, fd)
		}
	}
	return fds, nil
}

func (s roStorage) Open(fd storage.FileDesc) (storage.Reader, error) {
	if !storage.FileDescOk(fd) {
		return nil, storage.ErrInvalidFile
	}
	f, err := os.Open(filepath.Join(s.path, genName(fd)))
	if err != nil && fd.Type == storage.TypeTable && os.IsNotExist(err) {
		f, err = os.Open(filepath.Join(s.path, fmt.Sprintf("%06d.sst", fd.Num)))
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// genName is the file name of fd, as goleveldb names its files.
func genName(fd storage.FileDesc) string {
	switch fd.Type {
	case storage.TypeManifest:
		return fmt.Sprintf("MANIFEST-%06d", fd.Num)
	case storage.TypeJournal:
		return fmt.Sprintf("%06d.log", fd.Num)
	case storage.TypeTable:
		return fmt.Sprintf("%06d.ldb", fd.Num)
	default:
		return fmt.Sprintf("%06d.tmp", fd.Num)
	}
}

// parseName parses a file name goleveldb gives: "<n>.log", "<n>.ldb" (or
// the older "<n>.sst"), "<n>.tmp", "MANIFEST-<n>".
func parseName(name string) (storage.FileDesc, bool) {
	if rest, ok := strings.CutPrefix(name, "MANIFEST-"); ok {
		n, ok := parseNum(rest)
		return storage.FileDesc{Type: storage.TypeManifest, Num: n}, ok
	}
	num, ext, ok := strings.Cut(name, ".")
	if !ok {
		return storage.FileDesc{}, false
	}
	n, ok := parseNum(num)
	if !ok {
		return storage.FileDesc{}, false
	}
	var t storage.FileType
	switch ext {
	case "log":
		t = storage.TypeJournal
	case "ldb", "sst":
		t = storage.TypeTable
	case "tmp":
		t = storage.TypeTemp
	default:
		return storage.FileDesc{}, false
	}
	return storage.FileDesc{Type: t, Num: n}, true
}

func parseNum(s string) (int64, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
